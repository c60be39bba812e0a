/** The Connect form renders `multiline: true` credential fields (a PEM private key) as a textarea, masked when secret, never prefilled. */
import { describe, expect, it } from 'vitest';
import { typePage } from '../../src/service/connect/connect-html.ts';
import { getConnector } from '../../src/manifest/index.ts';

describe('Connect form: multiline fields', () => {
  it("GitHub's app variant shows the private key as a masked textarea and the ids as text inputs", () => {
    const app = getConnector('github').manifest.auth.find((v) => v.name === 'app');
    expect(app?.fields['private_key']).toMatchObject({ multiline: true, secret: true });
    const html = typePage({
      type: 'github',
      title: 'GitHub',
      csrf: 'csrf-token',
      fieldErrors: { 'app.private_key': 'is not a PEM private key' },
      variants: [
        {
          name: 'app',
          title: 'GitHub App',
          oauth: false,
          fields: [
            { name: 'app_id', label: 'App id', secret: false, required: true, type: 'string' },
            { name: 'private_key', label: 'Private key', secret: true, required: true, type: 'string', multiline: true },
          ],
        },
      ],
    });
    expect(html).toMatch(
      /<textarea id="f-app-private_key" name="field.private_key" rows="6" class="secret" autocapitalize="off" autocomplete="off" spellcheck="false" required aria-describedby="f-app-private_key-error" aria-invalid="true"><\/textarea>/,
    );
    expect(html).toMatch(/<input id="f-app-app_id" name="field.app_id" type="text" autocomplete="off" spellcheck="false" required>/);
    expect(html).toContain('<label for="f-app-private_key">Private key</label>');
  });
});
