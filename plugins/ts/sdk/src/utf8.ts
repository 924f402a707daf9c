// UTF-8 by hand: QuickJS (the engine, see host.ts) has no TextEncoder or
// TextDecoder. Lone surrogates become U+FFFD, and so do malformed bytes,
// as the WHATWG decoder does (one per maximal bad subpart is not
// attempted: one per bad byte).

export function encode(text: string): Uint8Array {
  const out: number[] = [];
  for (const ch of text) {
    let c = ch.codePointAt(0) as number;
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return Uint8Array.from(out);
}

/** The code point at `bytes[i]` and its length, or undefined if malformed. */
function decodeAt(bytes: Uint8Array, i: number): [number, number] | undefined {
  const b = bytes[i];
  const [len, min] = b < 0x80 ? [1, 0] : b >> 5 === 6 ? [2, 0x80] : b >> 4 === 14 ? [3, 0x800] : b >> 3 === 30 ? [4, 0x10000] : [0, 0];
  if (len === 0 || i + len > bytes.length) return undefined;
  let c = len === 1 ? b : b & (0x7f >> len);
  for (let k = 1; k < len; k++) {
    if (bytes[i + k] >> 6 !== 2) return undefined;
    c = (c << 6) | (bytes[i + k] & 63);
  }
  if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return undefined;
  return [c, len];
}

export function decode(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; ) {
    const got = decodeAt(bytes, i);
    out += String.fromCodePoint(got ? got[0] : 0xfffd);
    i += got ? got[1] : 1;
  }
  return out;
}
