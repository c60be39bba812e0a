/** The loader's checks of sync-only actions (changes, scroll) and the scroll pagination. */
import { describe, expect, it } from 'vitest';
import { loadManifestText, ManifestError } from '../../src/manifest/index.ts';

const head = `manifest_version: 1
type: demo
title: Demo
kind: demo
base_url: { default: "https://api.example.com" }
auth:
  - { name: key, type: bearer, fields: { key: { type: string, secret: true } }, token: "{{credentials.key}}" }
entities:
  things:
    primary_key: id
    record: { type: object, properties: { id: { type: string }, updated_at: { type: integer } } }
    actions:
      list:
        params: { cursor: { type: string } }
        request: { method: GET, path: /things, query: { cursor: "{{params.cursor}}" } }
        response: { records: "{{body.data}}" }
        pagination: { type: cursor, param: cursor, next: "{{body.next}}" }
`;
const changes = `      changes:
        params: { since: { type: integer, required: true }, cursor: { type: string } }
        request: { method: POST, path: /things/search, body: { since: "{{params.since}}", cursor: "{{params.cursor}}" } }
        response: { records: "{{body.data}}" }
        pagination: { type: cursor, param: cursor, next: "{{body.next}}" }
`;
const scroll = `      scroll:
        params: { token: { type: string } }
        request: { method: GET, path: /things/scroll, query: { token: "{{params.token}}" } }
        response: { records: "{{body.data}}" }
        pagination: { type: scroll, param: token, next: "{{body.token}}" }
`;

function problems(yaml: string): string {
  try {
    loadManifestText(yaml, 'demo.yaml');
  } catch (e) {
    if (e instanceof ManifestError) return e.message;
    throw e;
  }
  return '';
}

describe('sync-only actions in manifests', () => {
  it('accepts changes for incremental runs and scroll for full ones', () => {
    const lm = loadManifestText(
      head +
        changes +
        scroll +
        '    sync:\n      action: scroll\n      incremental: { action: changes, param: since, cursor_field: updated_at, format: unix_seconds }\n',
      'demo.yaml',
    );
    expect([...lm.entities.get('things')!.actions.keys()]).toEqual(['list', 'changes', 'scroll']);
    expect(lm.entities.get('things')!.actions.get('scroll')?.retrySafe).toBe(true);
  });

  it.each([
    ['a changes action sync does not use', head + changes + '    sync: { action: list }\n', /sync-only changes action is not used by sync/],
    ['a scroll action sync does not use', head + scroll + '    sync: { action: list }\n', /sync-only scroll action is not used by sync/],
    ['sync.action scroll without a scroll action', head + '    sync: { action: scroll }\n', /sync needs a scroll action/],
    [
      'incremental.action changes without the action',
      head + '    sync: { incremental: { action: changes, param: since, cursor_field: updated_at } }\n',
      /"changes" is not an action of things/,
    ],
    [
      'an incremental param the changes action lacks',
      head + changes + '    sync: { incremental: { action: changes, param: nope, cursor_field: updated_at } }\n',
      /"nope" is not a param of things.changes/,
    ],
    [
      'a changes action without records',
      head +
        changes.replace('response: { records: "{{body.data}}" }', 'response: { record: "{{body}}" }') +
        '    sync: { incremental: { action: changes, param: since, cursor_field: updated_at } }\n',
      /a changes action needs response.records/,
    ],
    [
      'a scroll pagination without next',
      head + scroll.replace(', next: "{{body.token}}"', '') + '    sync: { action: scroll }\n',
      /missing required key "next"/,
    ],
  ])('rejects %s', (_name, yaml, want) => {
    expect(problems(yaml)).toMatch(want);
  });
});
