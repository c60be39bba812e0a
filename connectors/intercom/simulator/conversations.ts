/**
 * The seeded workspace's conversations, generated from (seed, gen) whenever one is read: the
 * contact and admins it involves, its timeline (assignment, alternating replies, maybe a close),
 * and the statistics derived from it.
 */
import type { LazyRecords } from '../../../src/simulator/lazy-records.ts';
import { pick } from '../../../src/simulator/sim-server.ts';
import { chance, int, pool, recordRandom, type Json, type Rand } from './data.ts';

const DAY = 86_400;
const S_CONVERSATION = 3;

export interface ConversationRow {
  id: string;
  gen: number;
  created_at: number;
  contactId: string;
}

/** What a conversation draws on: the seed, where the data ends, the admins, teams, tags and contacts. */
export interface ConversationSources {
  seed: number;
  anchor: number;
  admins: Json[];
  teams: Json[];
  tags: Json[];
  contacts: LazyRecords;
}

/** A conversation as GET /conversations/{id} returns it: its timeline, and the statistics derived from it. */
export function conversationOf(w: ConversationSources, row: ConversationRow, plaintext: boolean): Json {
  const { seed, admins, teams, tags, contacts } = w;
  const r = recordRandom(seed, S_CONVERSATION, row.gen);
  const contact = contacts.peek(row.contactId) as Json;
  const contactRef = { type: 'contact', id: row.contactId, external_id: contact.external_id ?? null };
  const contactAuthor = { type: contact.role === 'lead' ? 'lead' : 'user', id: row.contactId, name: contact.name, email: contact.email ?? '' };
  const assignee = chance(r, 0.8) ? pick(r, admins) : undefined;
  const adminAuthor = (a: Json): Json => ({ type: 'admin', id: a.id, name: a.name, email: a.email });
  const team = chance(r, 0.7) ? pick(r, teams) : undefined;
  const channel = chance(r, 0.7) ? 'conversation' : pick(r, ['email', 'email', 'whatsapp', 'sms', 'facebook', 'instagram'] as const);
  const deliveredAs = chance(r, 0.78) ? 'customer_initiated' : chance(r, 0.6) ? 'admin_initiated' : 'automated';
  const [subjects, messages, replies] = [pool<string>('subjects'), pool<string>('messages'), pool<string>('replies')];
  const messageIdx = int(r, 0, messages.length - 1);
  const created = row.created_at;
  const opener = deliveredAs === 'customer_initiated' ? contactAuthor : adminAuthor(assignee ?? (admins[0] as Json));
  const html = (s: string): string => (plaintext ? s : `<p>${s}</p>`);
  const tl = timeline(w, r, row, { assignee, deliveredAs, contactAuthor, adminAuthor, html, replies, created });
  const { state, parts, lastContactReply, lastAdminReply } = tl;
  const participants = [...new Set(parts.map((p) => ((p.author as Json).type === 'admin' ? ((p.author as Json).id as string) : '')).filter((x) => x !== ''))];
  const tagN = chance(r, 0.3) ? int(r, 1, 2) : 0;
  const chosen = Array.from({ length: tagN }, () => pick(r, tags)).filter((tag, i, all) => all.indexOf(tag) === i);
  const rated = state === 'closed' && chance(r, 0.35);
  const aiAgent = chance(r, 0.25);
  const waiting = state === 'open' && lastContactReply !== null && (lastAdminReply === null || lastContactReply > lastAdminReply);
  const statistics = statisticsOf(tl, created);
  const facts: ConversationFacts = {
    row,
    created,
    contactRef,
    channel,
    deliveredAs,
    subjects,
    messages,
    messageIdx,
    opener,
    html,
    assignee,
    team,
    chosen,
    rated,
    aiAgent,
    waiting,
    participants,
    statistics,
    ...tl,
  };
  return conversationRecord(w, r, facts);
}

interface Opening {
  assignee: Json | undefined;
  deliveredAs: string;
  contactAuthor: Json;
  adminAuthor: (a: Json) => Json;
  html: (s: string) => string;
  replies: readonly string[];
  created: number;
}

interface Timeline {
  state: 'open' | 'closed' | 'snoozed';
  parts: Json[];
  firstAssignment: number | null;
  firstAdminReply: number | null;
  lastAdminReply: number | null;
  firstContactReply: number | null;
  lastContactReply: number | null;
  closedAt: number | null;
  closer: Json | undefined;
  updated: number;
}

/** The timeline: assignment, alternating replies, maybe a close; statistics derive from it. */
function timeline(w: ConversationSources, r: Rand, row: ConversationRow, o: Opening): Timeline {
  const { anchor, admins } = w;
  const { assignee, deliveredAs, contactAuthor, adminAuthor, html, replies, created } = o;
  const ageDays = (anchor - created) / DAY;
  const state = ageDays > 14 ? (chance(r, 0.9) ? 'closed' : 'open') : chance(r, 0.5) ? 'open' : chance(r, 0.3) ? 'snoozed' : 'closed';
  const parts: Json[] = [];
  let t = created;
  const addPart = (partType: string, author: Json, body: string | null, extra: Json = {}): void => {
    t = Math.min(t + int(r, 60, 6 * 3600), Math.max(created, anchor - 60));
    const part = {
      type: 'conversation_part',
      id: String(Number(row.id.slice(-9)) * 20 + parts.length + 1),
      part_type: partType,
      body,
      created_at: t,
      updated_at: t,
      notified_at: t,
      assigned_to: null,
      author,
      attachments: [],
    };
    parts.push({
      ...part,
      external_id: null,
      redacted: false,
      email_message_metadata: null,
      state: 'open',
      tags: [],
      event_details: null,
      app_package_code: null,
      ...extra,
    });
  };
  let firstAssignment: number | null = null;
  let firstAdminReply: number | null = null;
  let lastAdminReply: number | null = null;
  let lastContactReply: number | null = deliveredAs === 'customer_initiated' ? created : null;
  let firstContactReply: number | null = lastContactReply;
  if (assignee !== undefined) {
    addPart('assignment', adminAuthor(assignee), null, { assigned_to: { type: 'admin', id: assignee.id } });
    firstAssignment = t;
  }
  const exchanges = int(r, 0, 3);
  for (let i = 0; i < exchanges; i++) {
    addPart('comment', adminAuthor(assignee ?? pick(r, admins)), html(pick(r, replies.slice(0, 7))));
    firstAdminReply ??= t;
    lastAdminReply = t;
    if (chance(r, 0.7)) {
      addPart('comment', contactAuthor, html(pick(r, replies.slice(7))));
      firstContactReply ??= t;
      lastContactReply = t;
    }
  }
  let closedAt: number | null = null;
  let closer: Json | undefined;
  if (state === 'closed') {
    closer = assignee ?? pick(r, admins);
    addPart('close', adminAuthor(closer), null, { state: 'closed' });
    closedAt = t;
  } else if (state === 'snoozed') addPart('snoozed', adminAuthor(assignee ?? pick(r, admins)), null, { state: 'snoozed' });
  const updated = t;
  return { state, parts, firstAssignment, firstAdminReply, lastAdminReply, firstContactReply, lastContactReply, closedAt, closer, updated };
}

/** Intercom types these statistics as integers; a milestone not reached yet is left out. */
function statisticsOf(tl: Timeline, created: number): Json {
  const { parts, firstAssignment, firstAdminReply, lastAdminReply, firstContactReply, lastContactReply, closedAt, closer } = tl;
  const since = (x: number | null): number | null => (x === null ? null : x - created);
  return {
    type: 'conversation_statistics',
    time_to_assignment: since(firstAssignment),
    time_to_admin_reply: since(firstAdminReply),
    time_to_first_close: since(closedAt),
    time_to_last_close: since(closedAt),
    median_time_to_reply: since(firstAdminReply),
    first_contact_reply_at: firstContactReply,
    first_assignment_at: firstAssignment,
    first_admin_reply_at: firstAdminReply,
    first_close_at: closedAt,
    last_assignment_at: firstAssignment,
    last_assignment_admin_reply_at: firstAdminReply,
    last_contact_reply_at: lastContactReply,
    last_admin_reply_at: lastAdminReply,
    last_close_at: closedAt,
    last_closed_by_id: closer?.id ?? null,
    count_reopens: 0,
    count_assignments: firstAssignment === null ? 0 : 1,
    count_conversation_parts: parts.length + 1,
  };
}

interface ConversationFacts extends Timeline {
  row: ConversationRow;
  created: number;
  contactRef: Json;
  channel: string;
  deliveredAs: string;
  subjects: readonly string[];
  messages: readonly string[];
  messageIdx: number;
  opener: Json;
  html: (s: string) => string;
  assignee: Json | undefined;
  team: Json | undefined;
  chosen: Json[];
  rated: boolean;
  aiAgent: boolean;
  waiting: boolean;
  participants: string[];
  statistics: Json;
}

/** The record; its fields draw on the conversation's stream in this order. */
function conversationRecord(w: ConversationSources, r: Rand, f: ConversationFacts): Json {
  const { anchor, admins } = w;
  const {
    row,
    created,
    contactRef,
    channel,
    deliveredAs,
    subjects,
    messages,
    messageIdx,
    opener,
    html,
    assignee,
    team,
    chosen,
    rated,
    aiAgent,
    waiting,
    participants,
    statistics,
    state,
    parts,
    firstContactReply,
    lastContactReply,
    closedAt,
    closer,
    updated,
  } = f;
  return {
    type: 'conversation',
    id: row.id,
    created_at: created,
    updated_at: updated,
    waiting_since: waiting ? lastContactReply : null,
    snoozed_until: state === 'snoozed' ? anchor + int(r, 1, 120) * 3600 : null,
    source: {
      type: channel,
      id: String(403918000 + row.gen),
      delivered_as: deliveredAs,
      subject: channel === 'email' ? subjects[messageIdx % subjects.length] : '',
      body: html(messages[messageIdx] as string),
      author: opener,
      attachments: [],
      url:
        channel === 'conversation' && chance(r, 0.5)
          ? pick(r, ['https://app.acme.example/settings/billing', 'https://app.acme.example/dashboard', 'https://www.acme.example/pricing'] as const)
          : null,
      redacted: false,
    },
    contacts: { type: 'contact.list', contacts: [contactRef] },
    first_contact_reply: firstContactReply === null ? null : { created_at: firstContactReply, type: channel === 'email' ? 'email' : 'conversation', url: null },
    admin_assignee_id: assignee === undefined ? null : Number(assignee.id),
    team_assignee_id: team === undefined ? null : Number(team.id),
    open: state !== 'closed',
    state,
    read: state === 'closed' || chance(r, 0.6),
    tags: {
      type: 'tag.list',
      tags: chosen.map((tag) => ({
        type: 'tag',
        id: tag.id,
        name: tag.name,
        applied_at: created + int(r, 60, 3600),
        applied_by: { type: 'admin', id: (assignee ?? (admins[0] as Json)).id },
      })),
    },
    priority: chance(r, 0.15) ? 'priority' : 'not_priority',
    sla_applied: chance(r, 0.15)
      ? { type: 'conversation_sla_summary', sla_name: 'VIP first response', sla_status: pick(r, ['hit', 'missed', 'active'] as const) }
      : null,
    statistics: parts.length === 0 ? null : Object.fromEntries(Object.entries(statistics).filter(([, v]) => v !== null)),
    conversation_rating: rated
      ? {
          rating: pick(r, [5, 5, 5, 4, 4, 3, 2, 1] as const),
          remark: chance(r, 0.5) ? pick(r, ['Super helpful, thanks!', 'Quick and friendly.', 'Took a while but solved it.', 'Not resolved.'] as const) : '',
          created_at: (closedAt ?? updated) + int(r, 60, 7200),
          updated_at: (closedAt ?? updated) + int(r, 60, 7200),
          contact: contactRef,
          teammate: { type: 'admin', id: (closer ?? (admins[0] as Json)).id },
        }
      : null,
    teammates: participants.length === 0 ? null : { type: 'admin.list', teammates: participants.map((x) => ({ type: 'admin', id: x })) },
    title: chance(r, 0.3) ? subjects[messageIdx % subjects.length] : null,
    custom_attributes: {
      'Issue type': pick(r, ['Billing', 'Bug', 'Question', 'Feature request', 'Account'] as const),
      'Product area': pick(r, ['Dashboard', 'Integrations', 'Mobile app', 'API'] as const),
    },
    topics: {},
    ticket: null,
    linked_objects: { type: 'list', data: [], total_count: 0, has_more: false },
    ai_agent: aiAgent
      ? {
          source_type: 'workflow',
          source_title: 'Fin answers first',
          last_answer_type: pick(r, ['ai_answer', 'custom_answer'] as const),
          resolution_state: pick(r, ['assumed_resolution', 'confirmed_resolution', 'routed_to_team', 'abandoned'] as const),
          rating: null,
          rating_remark: null,
          created_at: created,
          updated_at: created + int(r, 30, 600),
        }
      : null,
    ai_agent_participated: aiAgent,
    conversation_parts: { type: 'conversation_part.list', conversation_parts: parts, total_count: parts.length },
  };
}
