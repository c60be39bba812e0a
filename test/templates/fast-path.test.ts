/**
 * Templates of only text and plain paths (`Bearer {{credentials.api_key}}`) render without the
 * Handlebars runtime; they must render exactly as Handlebars does for every kind of value.
 */
import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import { compileTemplate } from '../../src/templates/index.ts';

const TEMPLATES = [
  'Bearer {{credentials.api_key}}',
  '{{a}}-{{b.c}} and {{b.d.e}}!',
  'x {{missing.deep.path}} y',
  '{{a}}{{a}}',
  'len {{s.length}} first {{s.[0]}}',
  '{{arr}} / {{obj}} / {{n}} / {{t}} / {{f}} / {{z}} / {{nul}}',
  '{{{a}}} & {{~ b.c ~}} !',
  '{{arr.[1]}} {{obj.k}} {{obj.toString}} {{obj.constructor}}',
];

const CONTEXTS: Record<string, unknown>[] = [
  {
    credentials: { api_key: 'k<&>"\'' },
    a: 'A & <b>',
    b: { c: 'C', d: { e: 5 } },
    s: 'héllo',
    arr: [1, 'two', null],
    obj: { k: 'v' },
    n: 1.5,
    t: true,
    f: false,
    z: 0,
    nul: null,
  },
  { credentials: {}, a: 0, b: null, s: '', arr: [], obj: {}, n: -0, t: 'true' },
  { credentials: null, a: '', b: { c: null, d: null } },
  {},
];

describe('template fast path', () => {
  it.each(TEMPLATES)('%s renders as Handlebars does', (source) => {
    const reference = Handlebars.create().compile(source, { noEscape: true });
    const t = compileTemplate(source);
    for (const ctx of CONTEXTS) expect(t.render(ctx), JSON.stringify(ctx)).toBe(reference(ctx));
  });

  it('leaves functions in the context to Handlebars (it calls them)', () => {
    const source = 'v={{f}}';
    const ctx = { f: () => 'called' };
    expect(compileTemplate(source).render(ctx)).toBe(Handlebars.create().compile(source, { noEscape: true })(ctx));
  });
});
