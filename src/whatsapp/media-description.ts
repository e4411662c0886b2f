// What the lead sent besides text, described in words: the model reads it as the lead's message
// and the dashboard shows the same stored text. Nothing is downloaded or transcribed (the
// provider's media URLs need our credentials and may hold anything), so the model knows what
// arrived, not what it shows; the lead's caption follows the description.

export type Media =
  | { kind: 'voice' | 'audio' | 'image' | 'video' | 'sticker' | 'contacts' | 'other' }
  | { kind: 'document'; name?: string }
  | { kind: 'location'; latitude: number; longitude: number; name?: string; address?: string };

const MAX_DETAIL = 200;

/** `[voice note, not transcribed]`, `[document: offer.pdf]`, `[location: 52.5200, 13.4050 — Office, Street 1]`. */
export function describeMedia(m: Media): string {
  switch (m.kind) {
    case 'voice':
      return '[voice note, not transcribed]';
    case 'audio':
      return '[audio file, not transcribed]';
    case 'image':
      return '[image]';
    case 'video':
      return '[video]';
    case 'sticker':
      return '[sticker]';
    case 'contacts':
      return '[contact card]';
    case 'other':
      return '[attachment]';
    case 'document':
      return m.name ? `[document: ${detail(m.name)}]` : '[document]';
    case 'location': {
      const where = [m.name, m.address]
        .map((s) => (s ? detail(s) : ''))
        .filter((s) => s !== '')
        .join(', ');
      return `[location: ${m.latitude.toFixed(4)}, ${m.longitude.toFixed(4)}${where ? ` — ${where}` : ''}]`;
    }
  }
}

/** The descriptions, then the caption (what the lead wrote with them), as one message. */
export function mediaMessage(media: Media[], caption: string): string {
  return [...media.map(describeMedia), caption.trim()].filter((s) => s !== '').join(' ');
}

/** A coordinate pair, or null unless both are numbers within range. */
export function coordinates(lat: unknown, lng: unknown): { latitude: number; longitude: number } | null {
  const [latitude, longitude] = [Number(lat), Number(lng)];
  if (lat === '' || lng === '' || lat == null || lng == null) return null;
  if (!Number.isFinite(latitude) || !Number.isFinite(longitude)) return null;
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return null;
  return { latitude, longitude };
}

/** One line, brackets made round (a lead's file name cannot close the description early), capped. */
function detail(s: string): string {
  const flat = s.replace(/\s+/g, ' ').replace(/\[/g, '(').replace(/\]/g, ')').trim();
  return flat.length > MAX_DETAIL ? `${flat.slice(0, MAX_DETAIL - 1)}…` : flat;
}
