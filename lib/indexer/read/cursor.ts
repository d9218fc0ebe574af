/**
 * Keyset cursors. Every list is ordered by (sort timestamp desc, transactionId desc); a cursor is
 * the key of the last row of a page, so the next page is "rows strictly after this key". It is
 * opaque to clients (base64url of a small JSON array) and checked strictly when read back.
 */
export interface Cursor {
  readonly ts: number;
  readonly id: string;
}

const MAX_ID_LENGTH = 200;
/** The sort timestamps are PostgreSQL `integer` columns: a larger ts cannot be bound as one. */
const MAX_TS = 2147483647;

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.ts, cursor.id]), 'utf8').toString('base64url');
}

/** Returns the cursor, or undefined when the text is not one this server produced. */
export function decodeCursor(text: string): Cursor | undefined {
  if (text.length === 0 || text.length > 400 || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [ts, id] = value as [unknown, unknown];
  if (typeof ts !== 'number' || !Number.isSafeInteger(ts) || ts < 0 || ts > MAX_TS) return undefined;
  // A NUL cannot be sent as PostgreSQL text (the server refuses the whole statement).
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH || id.includes('\u0000')) return undefined;
  return { ts, id };
}
