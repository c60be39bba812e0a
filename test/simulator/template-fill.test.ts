/** The sidecar's templates name path parameters as they are written, dashes included ({{team-id}}). */
import { describe, expect, it } from 'vitest';
import { fill } from '../../src/simulator/rules.ts';

describe('fill', () => {
  it('fills a placeholder whose name holds dashes, alone or inside text, and leaves out one nothing fills', () => {
    const vars = { 'team-id': '0b3a9a1e-4c2d-4e0f-9a8b-7c6d5e4f3a2b', 'channel-id': '19:ab@thread.tacv2' };
    expect(fill({ teamId: '{{team-id}}', url: 'https://teams.example/{{channel-id}}?g={{team-id}}' }, vars)).toEqual({
      teamId: '0b3a9a1e-4c2d-4e0f-9a8b-7c6d5e4f3a2b',
      url: 'https://teams.example/19:ab@thread.tacv2?g=0b3a9a1e-4c2d-4e0f-9a8b-7c6d5e4f3a2b',
    });
    expect(fill({ 'chatId?': '{{chat-id}}', n: '{{n}}' }, { n: 3 })).toEqual({ n: 3 });
  });
});
