/**
 * Deterministic meeting-note content for the Granola simulator.
 *
 * Only a note's identity and timestamps are kept in memory (see state in index.ts); everything
 * else — title, attendees, calendar event, summaries, transcript — is regenerated on demand from
 * (seed, gen), so a 100 000-note benchmark dataset costs a few MB, and the same seed always
 * yields byte-identical notes.
 */
import { mixSeed, pick, seededRandom } from '../sim-server.ts';

/** A transcript segment as Granola returns it. */
export interface GranolaTranscriptSegment {
  speaker: { source: 'microphone' | 'speaker'; diarization_label?: string };
  text: string;
  start_time: string;
  end_time: string;
}

export interface GranolaPerson {
  name: string | null;
  email: string;
}

export interface GranolaCalendarEvent {
  event_title: string;
  invitees: { email: string }[];
  organiser: string;
  calendar_event_id: string;
  scheduled_start_time: string;
  scheduled_end_time: string;
}

export interface GranolaFolder {
  id: string;
  object: 'folder';
  name: string;
}

/** The list-endpoint shape (note summaries carry no detail fields). */
export interface GranolaNoteSummary {
  id: string;
  object: 'note';
  title: string | null;
  owner: GranolaPerson;
  created_at: string;
  updated_at: string;
}

/** The get-endpoint shape; `transcript` is present only with include=transcript. */
export interface GranolaNote extends GranolaNoteSummary {
  web_url: string;
  calendar_event: GranolaCalendarEvent | null;
  attendees: GranolaPerson[];
  folder_membership: GranolaFolder[];
  summary_text: string;
  summary_markdown: string | null;
  transcript?: GranolaTranscriptSegment[];
}

/** Fields a test may overwrite with `touch(id, patch)` or set with `add(patch)`. */
export interface GranolaNotePatch {
  title?: string | null;
  summary_text?: string;
  summary_markdown?: string | null;
}

/** The content part of a note that does not depend on mutable state. */
export interface GeneratedContent {
  title: string | null;
  owner: GranolaPerson;
  web_url: string;
  calendar_event: GranolaCalendarEvent | null;
  attendees: GranolaPerson[];
  folder_membership: GranolaFolder[];
  summary_text: string;
  summary_markdown: string | null;
  /** Meeting length in seconds, used to lay out the transcript. */
  durationSec: number;
  /** Lines the transcript is built from, so it talks about the same meeting. */
  script: string[];
}


const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Granola ids are a prefix plus 14 alphanumerics (`not_1d3tmYTlCICgjy`). */
export function granolaId(rand: () => number, prefix: string): string {
  let s = prefix;
  for (let i = 0; i < 14; i++) s += ALNUM[Math.floor(rand() * ALNUM.length)];
  return s;
}

function uuid(rand: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${'89ab'[Math.floor(rand() * 4)]}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** ISO 8601 without milliseconds, the way Granola prints timestamps. */
export function iso(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

const int = (rand: () => number, lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));

const FIRST = ['Ada', 'Ben', 'Chloe', 'Dev', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonah', 'Kemi', 'Liam', 'Maya', 'Nikhil', 'Olga', 'Priya', 'Quinn', 'Rosa', 'Sam', 'Tariq', 'Uma', 'Victor', 'Wen', 'Yara', 'Zoe', 'Marco', 'Aisha', 'Tom', 'Lena', 'Oscar'];
const LAST = ['Okafor', 'Lindqvist', 'Tanaka', 'Moreau', 'Patel', 'Schmidt', 'Costa', 'Nguyen', 'Haddad', 'Kowalski', 'Reyes', 'Brennan', 'Ivanova', 'Mensah', 'Fischer', 'Duarte', 'Sato', 'Walsh', 'Andersen', 'Bauer'];
const CUSTOMERS = [
  ['Acme Robotics', 'acmerobotics.com'],
  ['Bluefin Logistics', 'bluefin.io'],
  ['Cedar Health', 'cedarhealth.org'],
  ['Driftwood Studios', 'driftwood.studio'],
  ['Everstone Capital', 'everstone.vc'],
  ['Fjord Energy', 'fjordenergy.no'],
  ['Granite Insurance', 'graniteins.com'],
  ['Helix Biotech', 'helixbio.com'],
  ['Ironbark Retail', 'ironbark.shop'],
  ['Juniper Schools', 'juniper.edu'],
] as const;
const FEATURES = ['the onboarding flow', 'SSO', 'usage-based billing', 'the mobile app', 'audit logs', 'the Slack integration', 'search', 'the reporting dashboard', 'data export', 'role-based access'];
const ROLES = ['Senior Backend Engineer', 'Product Designer', 'Account Executive', 'Data Analyst', 'Engineering Manager', 'Customer Success Lead'];
const FOLDER_NAMES = ['Customer calls', 'Hiring', 'Leadership', 'Product', 'Engineering', '1:1s', 'Board', 'Design reviews'];
const WORKSPACE = { name: 'Northwind Labs', domain: 'northwindlabs.com' };

/** The people and folders of one seeded workspace. */
export interface Workspace {
  members: GranolaPerson[];
  /** Members who own notes (the people who run Granola). */
  owners: GranolaPerson[];
  folders: GranolaFolder[];
}

export function makeWorkspace(seed: number): Workspace {
  const rand = seededRandom(mixSeed(seed, 0x77));
  const members: GranolaPerson[] = [];
  const seen = new Set<string>();
  while (members.length < 24) {
    const first = pick(rand, FIRST);
    const last = pick(rand, LAST);
    const email = `${first}.${last}@${WORKSPACE.domain}`.toLowerCase();
    if (seen.has(email)) continue;
    seen.add(email);
    members.push({ name: `${first} ${last}`, email });
  }
  const folders = FOLDER_NAMES.map((name) => ({ id: granolaId(rand, 'fol_'), object: 'folder' as const, name }));
  return { members, owners: members.slice(0, 8), folders };
}

function externalPerson(rand: () => number, domain: string): GranolaPerson {
  const first = pick(rand, FIRST);
  const last = pick(rand, LAST);
  // Calendar invitees outside the workspace often have no display name.
  return { name: rand() < 0.2 ? null : `${first} ${last}`, email: `${first[0]}${last}@${domain}`.toLowerCase() };
}

interface Meeting {
  title: string;
  folder: string | null;
  points: string[];
  decisions: string[];
  actions: string[];
  lines: string[];
  external?: { company: string; domain: string };
}

function meeting(rand: () => number, owner: GranolaPerson, other: GranolaPerson): Meeting {
  const customer = pick(rand, CUSTOMERS);
  const feature = pick(rand, FEATURES);
  const role = pick(rand, ROLES);
  const ownerFirst = (owner.name ?? 'Me').split(' ')[0] ?? 'Me';
  const otherFirst = (other.name ?? 'them').split(' ')[0] ?? 'them';
  const q = `Q${int(rand, 1, 4)}`;
  const kinds: (() => Meeting)[] = [
    () => ({
      title: 'Weekly product sync',
      folder: 'Product',
      points: [`Progress on ${feature} is on track for the end of the sprint`, `Support tickets about ${pick(rand, FEATURES)} dropped by ${int(rand, 10, 40)}%`, 'Beta feedback is mostly positive but asks for better docs'],
      decisions: [`Ship ${feature} behind a feature flag first`, 'Move the pricing page refresh to next cycle'],
      actions: [`${ownerFirst} to write the launch checklist`, `${otherFirst} to share the beta feedback summary`],
      lines: [`Let's start with ${feature}, where are we?`, 'Most of the backend work is merged, the UI is in review.', 'Any blockers from design?', `We still need copy for the empty states.`, 'Can we flag it on for a few beta customers first?', 'Yes, that keeps the blast radius small.', 'Support volume is down this week, which is nice.', 'I will write up the checklist today.'],
    }),
    () => ({
      title: `${ownerFirst} / ${otherFirst} 1:1`,
      folder: '1:1s',
      points: [`${otherFirst} feels good about the current project scope`, 'Discussed growth goals for next half', 'Workload is high but manageable'],
      decisions: [`${otherFirst} will lead the next planning session`],
      actions: [`${ownerFirst} to find a mentor for ${otherFirst}`, `${otherFirst} to draft a proposal for the on-call rotation`],
      lines: ['How has this week been?', 'Busy, but the project is finally unblocked.', 'What would you like to focus on next half?', 'I would like to lead more of the planning.', 'That makes sense, let us make it happen.', 'On-call has been rough lately.', 'Can you draft a proposal to change the rotation?'],
    }),
    () => ({
      title: `${customer[0]} — ${pick(rand, ['discovery call', 'quarterly business review', 'renewal check-in', 'technical deep dive'])}`,
      folder: 'Customer calls',
      points: [`${customer[0]} wants ${feature} before renewal`, `They have ${int(rand, 20, 900)} active seats and plan to grow`, 'Security review is the main open item'],
      decisions: ['Send the security questionnaire this week', `Offer early access to ${feature}`],
      actions: [`${ownerFirst} to send the SOC 2 report`, `${otherFirst} to schedule a follow-up with their IT team`],
      lines: ['Thanks for making the time today.', `We have been using the product across ${int(rand, 2, 9)} teams now.`, `What is the biggest gap for you right now?`, `Honestly, ${feature}. Our admins keep asking about it.`, 'That is on our roadmap for this quarter.', 'Could we get early access?', 'I think we can arrange that.', 'Our security team will want to review it first.'],
      external: { company: customer[0], domain: customer[1] },
    }),
    () => ({
      title: `${q} planning`,
      folder: 'Leadership',
      points: [`${q} goals focus on retention and ${feature}`, `Headcount plan adds ${int(rand, 1, 6)} engineers`, 'Infrastructure costs need to come down'],
      decisions: [`Commit to ${feature} as the headline ${q} project`, 'Freeze new vendor contracts until the budget review'],
      actions: [`${ownerFirst} to circulate the draft OKRs`, `${otherFirst} to model infrastructure savings`],
      lines: [`Let us agree on the top three goals for ${q}.`, `Retention has to be one of them.`, `And ${feature}, customers keep asking.`, 'What about infrastructure spend?', 'We can save a lot by rightsizing the clusters.', 'Let us freeze new vendors until the budget review.', 'I will send the draft OKRs tomorrow.'],
    }),
    () => ({
      title: `Design review: ${feature}`,
      folder: 'Design reviews',
      points: ['The new layout tested well with five users', 'Navigation labels are still confusing', 'Accessibility contrast issues on the dark theme'],
      decisions: ['Go with option B for the layout', 'Rename the settings tab'],
      actions: [`${otherFirst} to fix contrast issues`, `${ownerFirst} to update the spec`],
      lines: ['I will walk you through the two options.', 'Option B tested better in the sessions.', 'The labels in the sidebar confused people.', 'Can we rename the settings tab?', 'Yes, and fix contrast on the dark theme.', 'Let us go with B then.'],
    }),
    () => ({
      title: `Hiring debrief: ${role}`,
      folder: 'Hiring',
      points: ['Strong system design round', 'Communication was clear and structured', 'Some gaps in testing practices'],
      decisions: [rand() < 0.6 ? 'Move forward with an offer' : 'Do not proceed at this time'],
      actions: [`${ownerFirst} to send feedback to the recruiter`, `${otherFirst} to write up the technical notes`],
      lines: ['What did everyone think?', 'The system design round was really strong.', 'I liked how they structured their answers.', 'Testing was a bit thin.', 'Overall I am a yes.', 'Same here, let us move forward.'],
    }),
    () => ({
      title: 'Sprint retro',
      folder: 'Engineering',
      points: ['Release went out on time', 'Flaky tests slowed down merges', 'Pairing sessions helped new joiners'],
      decisions: ['Quarantine flaky tests automatically', 'Keep weekly pairing sessions'],
      actions: [`${otherFirst} to set up the flaky test quarantine`, `${ownerFirst} to book pairing slots`],
      lines: ['What went well this sprint?', 'We shipped on time for once.', 'What did not go well?', 'The flaky tests, again.', 'Can we quarantine them automatically?', 'I can set that up this week.'],
    }),
    () => ({
      title: `Incident review: ${pick(rand, ['API latency spike', 'failed deploy', 'webhook backlog', 'login outage'])}`,
      folder: 'Engineering',
      points: [`Impact lasted ${int(rand, 5, 95)} minutes`, 'Root cause was a missing database index', 'Alerting fired late'],
      decisions: ['Add the index and a migration check', 'Lower the latency alert threshold'],
      actions: [`${otherFirst} to add the migration check`, `${ownerFirst} to publish the postmortem`],
      lines: ['Let us walk through the timeline.', 'Alerts fired about twenty minutes after the spike started.', 'The query plan changed after the last migration.', 'So we were missing an index.', 'We should check for that in CI.', 'I will publish the postmortem today.'],
    }),
  ];
  return pick(rand, kinds)();
}

/** Generate the immutable content of note number `gen` starting at `startMs`. */
export function generateContent(seed: number, gen: number, startMs: number, ws: Workspace): GeneratedContent {
  const rand = seededRandom(mixSeed(seed, gen, 1));
  const owner = pick(rand, ws.owners);
  let other = pick(rand, ws.members);
  if (other.email === owner.email) other = ws.members[(ws.members.indexOf(other) + 1) % ws.members.length] as GranolaPerson;
  const m = meeting(rand, owner, other);

  const attendees: GranolaPerson[] = [owner, other];
  const extra = int(rand, 0, 4);
  for (let i = 0; i < extra; i++) {
    const p = m.external && rand() < 0.6 ? externalPerson(rand, m.external.domain) : pick(rand, ws.members);
    if (!attendees.some((a) => a.email === p.email)) attendees.push(p);
  }
  if (m.external && !attendees.some((a) => a.email.endsWith(`@${m.external?.domain}`))) attendees.push(externalPerson(rand, m.external.domain));

  const durationSec = pick(rand, [15, 25, 30, 30, 45, 60, 60, 90]) * 60;
  // Ad-hoc notes (started without a calendar event) have no calendar_event.
  const calendar_event: GranolaCalendarEvent | null =
    rand() < 0.12
      ? null
      : {
          event_title: m.title,
          invitees: attendees.filter((a) => a.email !== owner.email).map((a) => ({ email: a.email })),
          organiser: owner.email,
          calendar_event_id: `${Array.from({ length: 26 }, () => 'abcdefghijklmnopqrstuv0123456789'[Math.floor(rand() * 32)]).join('')}_${iso(startMs).replace(/[-:]/g, '')}`,
          scheduled_start_time: iso(startMs),
          scheduled_end_time: iso(startMs + durationSec * 1000),
        };

  const folder_membership: GranolaFolder[] = [];
  const home = ws.folders.find((f) => f.name === m.folder);
  if (home && rand() < 0.8) folder_membership.push(home);
  if (rand() < 0.1) {
    const f = pick(rand, ws.folders);
    if (!folder_membership.includes(f)) folder_membership.push(f);
  }

  const summary_text = `${m.points.join('. ')}. Decisions: ${m.decisions.join('; ')}. Next steps: ${m.actions.join('; ')}.`;
  const summary_markdown =
    rand() < 0.05
      ? null
      : [`### Key points`, ...m.points.map((p) => `- ${p}`), '', `### Decisions`, ...m.decisions.map((d) => `- ${d}`), '', `### Action items`, ...m.actions.map((a) => `- [ ] ${a}`)].join('\n');

  return {
    // A few notes are never given a title (Granola returns null for them).
    title: rand() < 0.03 ? null : m.title,
    owner,
    web_url: `https://notes.granola.ai/d/${uuid(rand)}`,
    calendar_event,
    attendees,
    folder_membership,
    summary_text,
    summary_markdown,
    durationSec,
    script: m.lines,
  };
}

/** Generate the transcript of note `gen`; separate PRNG stream so it never shifts other fields. */
export function generateTranscript(seed: number, gen: number, startMs: number, content: GeneratedContent): GranolaTranscriptSegment[] {
  const rand = seededRandom(mixSeed(seed, gen, 2));
  const lines = content.script;

  const fillers = ['Okay.', 'Right, that makes sense.', 'Sounds good.', 'Let me check and get back to you.', 'Can you share your screen?', 'Good point.', 'I agree.', 'One more thing on that.', 'Got it, thanks.'];
  const segments: GranolaTranscriptSegment[] = [];
  const count = lines.length + int(rand, 2, 8);
  // Spread the conversation over the meeting rather than bunching it at the start.
  const step = (content.durationSec * 1000) / (count + 1);
  for (let i = 0; i < count; i++) {
    const text = i < lines.length ? (lines[i] as string) : pick(rand, fillers);
    const t = startMs + Math.floor(i * step + rand() * step * 0.5);
    const len = Math.max(2, Math.round(text.split(' ').length / 2.5) + int(rand, 0, 4));
    const source = i % 2 === 0 ? 'microphone' : 'speaker';
    segments.push({
      // The other side's audio is sometimes diarized into labelled speakers.
      speaker: source === 'speaker' && rand() < 0.3 ? { source, diarization_label: `Speaker ${int(rand, 1, 3)}` } : { source },
      text,
      start_time: iso(t),
      end_time: iso(t + len * 1000),
    });
  }
  return segments;
}
