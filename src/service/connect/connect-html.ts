/**
 * The Connect UI's HTML, rendered on the server: plain documents with one external stylesheet
 * and one external script (the CSP allows no inline code), every value escaped, labels on
 * every input, one <h1> per page and alerts announced to screen readers.
 */
import type { ConnectBrand } from './connect-brand.ts';

/** Escape text for HTML element content and quoted attribute values. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

export const ASSET_PATH = '/connect/assets';

/** The operator's name and logo at the top of the card; its accent colour as a stylesheet. */
function brandHeader(brand: ConnectBrand): string {
  if (brand.name === undefined && brand.logoUrl === undefined) return '';
  const logo =
    brand.logoUrl !== undefined
      ? `<img class="brand-logo" src="${esc(brand.logoUrl)}" alt="${brand.name === undefined ? 'Logo' : ''}" width="28" height="28">`
      : '';
  return `<header class="brand">${logo}${brand.name !== undefined ? `<span class="brand-name">${esc(brand.name)}</span>` : ''}</header>\n`;
}

function layout(title: string, body: string, page: string, brand: ConnectBrand = {}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(brand.name !== undefined ? `${title} · ${brand.name}` : title)}</title>
<link rel="icon" href="${esc(brand.logoUrl ?? 'data:,')}">
<link rel="stylesheet" href="${ASSET_PATH}/connect.css">${brand.accent !== undefined ? `\n<link rel="stylesheet" href="${ASSET_PATH}/brand.css">` : ''}
<script src="${ASSET_PATH}/connect.js" defer></script>
</head>
<body>
<main id="main" class="card" data-page="${esc(page)}">
${brandHeader(brand)}${body}
</main>
<p class="footer">Secured by Switchboard · your credentials are encrypted and never shown again</p>
</body>
</html>
`;
}

/** The page before the fragment token is exchanged: the script does the rest. */
export function bootstrapPage(brand: ConnectBrand = {}): string {
  return layout(
    'Connect an account',
    `<h1 id="heading">Opening your connection link…</h1>
<p id="status" role="status">One moment.</p>
<noscript><p class="alert" role="alert">This page needs JavaScript to read its link. Turn JavaScript on and reload.</p></noscript>`,
    'bootstrap',
    brand,
  );
}

/** A session that cannot be used (expired, used, unknown), or any other page-level failure. */
export function messagePage(heading: string, detail: string, brand: ConnectBrand = {}): string {
  return layout(heading, `<h1>${esc(heading)}</h1>\n<p class="alert" role="alert">${esc(detail)}</p>`, 'message', brand);
}

export interface HomeType {
  type: string;
  title: string;
  description?: string | undefined;
  /** The manifest's logo (https URL or data:image URI). */
  logo?: string | undefined;
  connectors: { id: string; name: string; status: string; created_at: string }[];
}

/** An app's logo beside its name (decorative: the name follows), or nothing. */
function appLogo(logo: string | undefined, size: number): string {
  return logo !== undefined ? `<img class="app-logo" src="${esc(logo)}" alt="" width="${String(size)}" height="${String(size)}">` : '';
}

function connectorLine(t: HomeType, c: HomeType['connectors'][number]): string {
  const date = c.created_at.slice(0, 10);
  if (c.status === 'auth_failed') {
    return `<li class="connector failed"><span><strong>${esc(c.name)}</strong> · added ${esc(date)} · <span class="badge bad">credentials rejected</span></span>
<a class="button secondary" href="/connect/types/${encodeURIComponent(t.type)}?reconnect=${encodeURIComponent(c.id)}" aria-label="Reconnect ${esc(c.name)}">Reconnect</a></li>`;
  }
  const badge = c.status === 'error' ? '<span class="badge warn">last check failed</span>' : '<span class="badge ok">connected</span>';
  return `<li class="connector"><span><strong>${esc(c.name)}</strong> · added ${esc(date)} · ${badge}</span></li>`;
}

/** The list of connector types the session allows, with the customer's existing connectors. */
export function homePage(types: HomeType[], brand: ConnectBrand = {}): string {
  const items = types
    .map((t) => {
      // Once connected, the app offers a quiet "Add another" rather than a second full button.
      const connected = t.connectors.some((c) => c.status !== 'auth_failed');
      const action = connected
        ? `<a class="button secondary small-button" href="/connect/types/${encodeURIComponent(t.type)}" aria-label="Connect another ${esc(t.title)} account">Add another</a>`
        : `<a class="button" href="/connect/types/${encodeURIComponent(t.type)}">Connect ${esc(t.title)}</a>`;
      return `<li class="type">
<div class="type-head"><div class="type-title">${appLogo(t.logo, 36)}<div><h2>${esc(t.title)}</h2>${t.description !== undefined ? `<p class="muted">${esc(t.description)}</p>` : ''}</div></div>
${action}</div>
${t.connectors.length > 0 ? `<ul class="connectors" aria-label="Your ${esc(t.title)} connections">${t.connectors.map((c) => connectorLine(t, c)).join('\n')}</ul>` : ''}
</li>`;
    })
    .join('\n');
  return layout('Connect an account', `<h1>Connect an account</h1>\n<p>Choose the app to connect.</p>\n<ul class="types">${items}</ul>`, 'home', brand);
}

export interface FormField {
  name: string;
  label: string;
  secret: boolean;
  required: boolean;
  type: string;
  /** A value over several lines (a PEM key): a textarea, its text masked when secret. */
  multiline?: boolean;
  /** The field's pattern (whole value), checked by the browser too. */
  pattern?: string | undefined;
  /** Shown under the label and linked by aria-describedby (an OAuth variant's fields: the field's description). */
  hint?: string | undefined;
}

export interface TypePageVariant {
  name: string;
  title: string;
  description?: string | undefined;
  /** OAuth variants show a button (after inputs for their pre-consent fields); credential variants a form of their fields. */
  oauth: boolean;
  fields: FormField[];
}

export interface TypePageInput {
  type: string;
  title: string;
  description?: string | undefined;
  docsUrl?: string | undefined;
  logo?: string | undefined;
  brand?: ConnectBrand | undefined;
  variants: TypePageVariant[];
  csrf: string;
  reconnect?: { id: string; name: string } | undefined;
  /** A message to show above the forms, in plain words (a refusal, a validation failure). */
  error?: string | undefined;
  /** The third-party API's own words, shown below the message as detail. */
  errorDetail?: string | undefined;
  /** Per-field messages, by `variant.field`. */
  fieldErrors?: Record<string, string> | undefined;
  /** Values to show again after a refusal, by `variant.field` (only an OAuth variant's non-secret pre-consent fields). */
  values?: Record<string, string> | undefined;
}

function variantSection(p: TypePageInput, v: TypePageVariant, single: boolean): string {
  const hidden = `<input type="hidden" name="csrf" value="${esc(p.csrf)}">
<input type="hidden" name="variant" value="${esc(v.name)}">${p.reconnect !== undefined ? `\n<input type="hidden" name="reconnect" value="${esc(p.reconnect.id)}">` : ''}`;
  const helpId = `help-${v.name}`;
  const heading = single ? '' : `<h2>${esc(v.title)}</h2>\n`;
  const help = v.description !== undefined ? `<p class="muted" id="${esc(helpId)}">${esc(v.description)}</p>\n` : '';
  const action = `/connect/types/${encodeURIComponent(p.type)}`;
  const fields = v.fields
    .map((f) => {
      const id = `f-${v.name}-${f.name}`;
      const err = p.fieldErrors?.[`${v.name}.${f.name}`];
      const describedBy = [v.description !== undefined ? helpId : '', f.hint !== undefined ? `${id}-hint` : '', err !== undefined ? `${id}-error` : '']
        .filter((x) => x !== '')
        .join(' ');
      // Secret values are never written back into the page, not even after a failed attempt; an OAuth variant's (non-secret) pre-consent values are.
      const value = v.oauth && !f.secret ? p.values?.[`${v.name}.${f.name}`] : undefined;
      const attrs = `autocomplete="off" spellcheck="false"${f.required ? ' required' : ''}${describedBy !== '' ? ` aria-describedby="${esc(describedBy)}"` : ''}${err !== undefined ? ' aria-invalid="true"' : ''}`;
      // A multiline field (a PEM key) is a textarea, its text masked when secret.
      const control =
        f.multiline === true
          ? `<textarea id="${esc(id)}" name="field.${esc(f.name)}" rows="6"${f.secret ? ' class="secret" autocapitalize="off"' : ''} ${attrs}>${value !== undefined ? esc(value) : ''}</textarea>`
          : `<input id="${esc(id)}" name="field.${esc(f.name)}" type="${f.secret ? 'password' : f.type === 'integer' || f.type === 'number' ? 'number' : 'text'}" autocomplete="off" spellcheck="false"${f.required ? ' required' : ''}${f.pattern !== undefined ? ` pattern="${esc(f.pattern)}"` : ''}${value !== undefined ? ` value="${esc(value)}"` : ''}${describedBy !== '' ? ` aria-describedby="${esc(describedBy)}"` : ''}${err !== undefined ? ' aria-invalid="true"' : ''}>`;
      return `<div class="field">
<label for="${esc(id)}">${esc(f.label)}${f.required ? '' : ' <span class="muted">(optional)</span>'}</label>
${f.hint !== undefined ? `<p class="muted hint" id="${esc(id)}-hint">${esc(f.hint)}</p>\n` : ''}${control}
${err !== undefined ? `<p class="field-error" id="${esc(id)}-error">${esc(err)}</p>` : ''}</div>`;
    })
    .join('\n');
  if (v.oauth) {
    return `<section class="variant" aria-labelledby="btn-${esc(v.name)}">
${heading}${help}<form method="post" action="${action}/oauth">
${hidden}
${fields}${fields !== '' ? '\n' : ''}<button type="submit" id="btn-${esc(v.name)}"${v.description !== undefined ? ` aria-describedby="${esc(helpId)}"` : ''}>Continue with ${esc(p.title)}</button>
</form>
</section>`;
  }
  return `<section class="variant"${single ? '' : ` aria-label="${esc(v.title)}"`}>
${heading}${help}<form method="post" action="${action}/credentials">
${hidden}
${fields}
<button type="submit">${p.reconnect !== undefined ? 'Save and reconnect' : `Connect ${esc(p.title)}`}</button>
</form>
</section>`;
}

/** One connector type: a form per credential variant and a button per OAuth variant. */
export function typePage(p: TypePageInput): string {
  const verb = p.reconnect !== undefined ? 'Reconnect' : 'Connect';
  const single = p.variants.length === 1;
  const intro =
    p.reconnect !== undefined
      ? `<p>${esc(p.title)} rejected the saved credentials of <strong>${esc(p.reconnect.name)}</strong>. Enter new ones to reconnect it.</p>`
      : p.description !== undefined
        ? `<p>${esc(p.description)}</p>`
        : '';
  const body = `<p><a href="/connect" class="back">← All apps</a></p>
<h1 class="app-heading">${appLogo(p.logo, 32)}<span>${verb} ${esc(p.title)}</span></h1>
${intro}
${
  p.error !== undefined
    ? `<div class="alert" role="alert" id="error" tabindex="-1"><strong>Not connected.</strong> ${esc(p.error)}${p.errorDetail !== undefined ? `<p class="detail">${esc(p.title)} said: <q>${esc(p.errorDetail)}</q></p>` : ''}</div>`
    : ''
}
${p.variants.length === 0 ? '<p class="alert" role="alert">This app cannot be connected here: it has no credential form and this service has no OAuth app for it.</p>' : p.variants.map((v) => variantSection(p, v, single)).join('\n<p class="or">or</p>\n')}
${p.docsUrl !== undefined ? `<p class="muted small">About ${esc(p.title)}'s API: <a href="${esc(p.docsUrl)}" rel="noreferrer noopener" target="_blank">${esc(new URL(p.docsUrl).host)}</a></p>` : ''}`;
  return layout(`${verb} ${p.title}`, body, 'type', p.brand);
}

export interface SuccessInput {
  title: string;
  type: string;
  connectorId: string;
  reconnected: boolean;
  /** redirect_url with connector_id and connector_type added, or undefined. */
  redirect?: string | undefined;
  /** targetOrigin for postMessage to window.opener. */
  messageOrigin: string;
  brand?: ConnectBrand | undefined;
}

/** The connection finished: the script tells the opener and follows the redirect. */
export function successPage(s: SuccessInput): string {
  const next =
    s.redirect !== undefined
      ? `<p><a class="button" id="continue" href="${esc(s.redirect)}">Continue</a></p>`
      : '<p id="close-hint">You can close this window.</p>';
  return layout(
    `${s.title} connected`,
    `<h1 id="done-heading" tabindex="-1">${esc(s.title)} is ${s.reconnected ? 'reconnected' : 'connected'}</h1>
<p role="status" class="success">Your ${esc(s.title)} account is ${s.reconnected ? 'reconnected' : 'connected'}.</p>
${next}
<div hidden id="result" data-connector-id="${esc(s.connectorId)}" data-connector-type="${esc(s.type)}" data-message-origin="${esc(s.messageOrigin)}"${s.redirect !== undefined ? ` data-redirect="${esc(s.redirect)}"` : ''}></div>`,
    'success',
    s.brand,
  );
}
