/**
 * Who holds a sync lease, and whether that holder can be known to be dead.
 *
 * A lease owner is `<instance name>#<pid>#<boot id>`: the instance's name (stable across its
 * restarts), its process id, and a random id of this boot. An instance that restarts after a
 * crash (kill -9, OOM) finds leases of its own name from another boot; it need not wait for them
 * to expire when it can know their holder is gone:
 *
 * - the operator named the instance (SWITCHBOARD_INSTANCE_ID): a name is one instance, so
 *   another boot of it is a previous life;
 * - otherwise the name is the host and its PID namespace: a holder of the same name whose
 *   process no longer exists on this host is dead.
 *
 * Everything else (another host, a live process, an owner in another format) is judged by its
 * lease's expiry alone, as before.
 */
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';

export interface LeaseOwner {
  /** The lease_owner value this instance writes. */
  readonly id: string;
  /** True when `owner` (a lease_owner value) is a holder known not to be running any more. */
  isDead(owner: string | null): boolean;
}

/** The default instance name: host name and PID namespace (processes are comparable within it). */
export function hostInstanceName(): string {
  let ns = '';
  try {
    ns = readlinkSync('/proc/self/ns/pid');
  } catch {
    // Not Linux: the host name alone.
  }
  return `${hostname()}${ns === '' ? '' : `/${ns}`}`;
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, under another user.
    return (e as { code?: string }).code === 'EPERM';
  }
}

/**
 * The lease owner of this boot. `name`: an operator-given instance name (a previous boot of it
 * is dead), or undefined for the host-derived name (a previous boot is dead when its process is).
 */
export function leaseOwner(name?: string, bootId: string = randomUUID()): LeaseOwner {
  const explicit = name !== undefined && name !== '';
  const instance = explicit ? name : hostInstanceName();
  const id = `${instance}#${process.pid}#${bootId}`;
  return {
    id,
    isDead(owner) {
      if (owner === null || owner === id) return false;
      const cut = owner.lastIndexOf('#');
      const pidCut = owner.lastIndexOf('#', cut - 1);
      if (cut < 0 || pidCut < 0 || owner.slice(0, pidCut) !== instance) return false;
      if (explicit) return true;
      const pid = Number(owner.slice(pidCut + 1, cut));
      return Number.isInteger(pid) && pid > 0 && !processExists(pid);
    },
  };
}
