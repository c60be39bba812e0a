/**
 * The operator's branding of the Connect UI, from configuration: a name shown at the top of every
 * page (and in its title), a logo, and an accent colour for buttons and links. The colour is
 * served as a small stylesheet (the CSP allows no inline style) and must keep white button text
 * readable (WCAG AA, 4.5:1), so a colour that would not is refused at start.
 */

export interface ConnectBrand {
  /** The operator's product name, e.g. "Acme CRM"; at most 60 characters. */
  name?: string;
  /** An https:// URL or a data:image/... URI. */
  logoUrl?: string;
  /** #rgb or #rrggbb. */
  accent?: string;
}

type Env = Record<string, string | undefined>;

/** Same rule as a manifest's `logo` (src/manifest/manifest-schema.ts). */
export const LOGO_PATTERN = /^(https:\/\/[^\s"<>]+|data:image\/(svg\+xml|png|jpeg|gif|webp)(;base64)?,[^\s"<>]+)$/;
const HEX = /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

function rgb(hex: string): [number, number, number] {
  const h = hex.length === 4 ? [...hex.slice(1)].map((c) => c + c).join('') : hex.slice(1);
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)) as [number, number, number];
}

/** WCAG relative luminance. */
function luminance([r, g, b]: [number, number, number]): number {
  const lin = (c: number): number => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** Contrast ratio of white text on `hex`. */
export function whiteContrast(hex: string): number {
  return 1.05 / (luminance(rgb(hex)) + 0.05);
}

/** SWITCHBOARD_CONNECT_BRAND_NAME, _LOGO_URL, _ACCENT_COLOR; throws naming the variable on a bad value. */
export function connectBrandFromEnv(env: Env): ConnectBrand {
  const brand: ConnectBrand = {};
  const name = env['SWITCHBOARD_CONNECT_BRAND_NAME']?.trim();
  if (name) {
    if (name.length > 60) throw new Error(`SWITCHBOARD_CONNECT_BRAND_NAME: at most 60 characters, got ${String(name.length)}`);
    brand.name = name;
  }
  const logo = env['SWITCHBOARD_CONNECT_LOGO_URL']?.trim();
  if (logo) {
    if (logo.length > 16384 || !LOGO_PATTERN.test(logo))
      throw new Error(
        'SWITCHBOARD_CONNECT_LOGO_URL: an https:// URL or a data:image/(svg+xml|png|jpeg|gif|webp) URI of at most 16 kB, without spaces, quotes or angle brackets',
      );
    brand.logoUrl = logo;
  }
  const accent = env['SWITCHBOARD_CONNECT_ACCENT_COLOR']?.trim();
  if (accent) {
    if (!HEX.test(accent)) throw new Error(`SWITCHBOARD_CONNECT_ACCENT_COLOR: a hex colour such as #0f766e, got "${accent}"`);
    const ratio = whiteContrast(accent);
    if (ratio < 4.5)
      throw new Error(
        `SWITCHBOARD_CONNECT_ACCENT_COLOR: ${accent} is too light for white button text (contrast ${ratio.toFixed(2)}:1, at least 4.5:1 needed); choose a darker colour`,
      );
    brand.accent = accent.toLowerCase();
  }
  return brand;
}

/** The accent stylesheet (/connect/assets/brand.css): the colour and a darker shade for hover. */
export function brandCss(brand: ConnectBrand): string {
  if (brand.accent === undefined) return '';
  const dark = rgb(brand.accent)
    .map((c) =>
      Math.round(c * 0.72)
        .toString(16)
        .padStart(2, '0'),
    )
    .join('');
  return `:root { --accent: ${brand.accent}; --accent-dark: #${dark}; }\n`;
}
