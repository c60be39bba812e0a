/**
 * Pages of GraphQL lists: Relay connections (first/after, nodes, edges, pageInfo), plain lists
 * (limit/page), and cursor pages over snapshots (the sidecar's graphql.cursor_pages).
 */
import { randomUUID } from 'node:crypto';
import { decodeCursor, encodeCursor } from '../core/cursors.ts';
import type { GraphqlErrors } from './errors.ts';
import type { GraphqlContext, GraphqlCtx, Rec } from './types.ts';

export interface GraphqlPages {
  connection(rows: Rec[], args: Rec): Rec;
  plainList(rows: Rec[], args: Rec): Rec[];
  cursorPage: GraphqlContext['cursorPage'];
  /** Forget every cursor_pages snapshot. */
  clearCursors(): void;
}

export function graphqlPages(ctx: Pick<GraphqlCtx, 'g' | 'sidecar' | 'clock'>, errors: GraphqlErrors): GraphqlPages {
  const { g, sidecar, clock } = ctx;
  const { fieldError } = errors;
  const pageSize = (args: Rec): number => {
    const pag = sidecar.pagination ?? {};
    let n = typeof args['first'] === 'number' ? args['first'] : typeof args['limit'] === 'number' ? args['limit'] : (pag.default_limit ?? 50);
    if (n < 0) throw fieldError('invalid', 'first must be a positive number');
    if (pag.max_limit !== undefined) n = Math.min(n, pag.max_limit);
    return n;
  };
  const connection = (rows: Rec[], args: Rec): Rec => {
    // Backward pages are not simulated: say so rather than answer the first page.
    for (const a of ['last', 'before'])
      if (args[a] !== undefined && args[a] !== null) throw fieldError('invalid', `The simulator pages forward only (first/after); ${a} is not simulated`);
    const limit = pageSize(args);
    let offset = 0;
    if (typeof args['after'] === 'string' && args['after'] !== '') {
      const o = decodeCursor(args['after'])?.offset;
      if (o === undefined) throw fieldError('invalid', 'after is not a cursor this API issued');
      offset = o;
    }
    const page = rows.slice(offset, offset + limit);
    const edges = page.map((node, j) => ({ node, cursor: encodeCursor(offset + j + 1) }));
    return {
      nodes: page,
      edges,
      pageInfo: {
        hasNextPage: offset + page.length < rows.length,
        hasPreviousPage: offset > 0,
        startCursor: page.length > 0 ? encodeCursor(offset + 1) : null,
        endCursor: page.length > 0 ? encodeCursor(offset + page.length) : null,
      },
    };
  };
  const plainList = (rows: Rec[], args: Rec): Rec[] => {
    if (typeof args['limit'] !== 'number') return rows;
    const page = typeof args['page'] === 'number' ? Math.max(1, args['page']) : 1;
    return rows.slice((page - 1) * args['limit'], page * args['limit']);
  };

  // ---------------------------------------------------------------- cursor pages (snapshots)
  const cp = g.cursor_pages ?? {};
  const snapshots = new Map<string, { rows: Rec[]; at: number }>();
  const skipped = (r: Rec): boolean => cp.skip !== undefined && cp.skip.values.includes(String(r[cp.skip.field]));
  const cursorPage: GraphqlContext['cursorPage'] = (rows, limit, cursor) => {
    const max = cp.max_limit ?? Number.MAX_SAFE_INTEGER;
    if (!Number.isInteger(limit) || limit < 1 || limit > max) throw fieldError('invalid', `limit must be between 1 and ${String(max)} (got ${String(limit)})`);
    let token: string = randomUUID();
    let pos = 0;
    let snap = { rows, at: clock.now() };
    if (typeof cursor === 'string' && cursor !== '') {
      const m = /^([\w-]+):(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
      const found = m === null ? undefined : snapshots.get(m[1] as string);
      if (m === null || found === undefined) throw fieldError('invalid_cursor', 'Invalid cursor');
      if (clock.now() - found.at > (cp.ttl_seconds ?? 3600) * 1000)
        throw fieldError('expired_cursor', `The cursor has expired: cursors are valid for ${String(cp.ttl_seconds ?? 3600)} s after the first request`);
      [token, pos, snap] = [m[1] as string, Number(m[2]), found];
    } else {
      snapshots.set(token, snap);
      if (snapshots.size > 2000) snapshots.delete(snapshots.keys().next().value as string);
    }
    const out: Rec[] = [];
    let i = pos;
    for (; i < snap.rows.length && out.length < limit; i++) if (!skipped(snap.rows[i] as Rec)) out.push(snap.rows[i] as Rec);
    return { cursor: i < snap.rows.length ? Buffer.from(`${token}:${String(i)}`).toString('base64url') : null, rows: out };
  };
  return { connection, plainList, cursorPage, clearCursors: () => snapshots.clear() };
}
