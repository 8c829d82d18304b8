// SHA-512 (FIPS 180-4) of a short string, in plain JS on 32-bit halves (BigInt arithmetic costs
// milliseconds while cold): loading node:crypto costs a plugin several milliseconds of start-up (it
// pulls in the stream modules), far more than hashing a name here.
// For names derived from the reference's (bandwidth's ifb), not for anything secret.

// The first 64 bits of the fractional parts of the cube roots of the first 80 primes (FIPS 180-4 4.2.3).
const K_HEX = [
  '428a2f98d728ae22 7137449123ef65cd b5c0fbcfec4d3b2f e9b5dba58189dbbc 3956c25bf348b538 59f111f1b605d019',
  '923f82a4af194f9b ab1c5ed5da6d8118 d807aa98a3030242 12835b0145706fbe 243185be4ee4b28c 550c7dc3d5ffb4e2',
  '72be5d74f27b896f 80deb1fe3b1696b1 9bdc06a725c71235 c19bf174cf692694 e49b69c19ef14ad2 efbe4786384f25e3',
  '0fc19dc68b8cd5b5 240ca1cc77ac9c65 2de92c6f592b0275 4a7484aa6ea6e483 5cb0a9dcbd41fbd4 76f988da831153b5',
  '983e5152ee66dfab a831c66d2db43210 b00327c898fb213f bf597fc7beef0ee4 c6e00bf33da88fc2 d5a79147930aa725',
  '06ca6351e003826f 142929670a0e6e70 27b70a8546d22ffc 2e1b21385c26c926 4d2c6dfc5ac42aed 53380d139d95b3df',
  '650a73548baf63de 766a0abb3c77b2a8 81c2c92e47edaee6 92722c851482353b a2bfe8a14cf10364 a81a664bbc423001',
  'c24b8b70d0f89791 c76c51a30654be30 d192e819d6ef5218 d69906245565a910 f40e35855771202a 106aa07032bbd1b8',
  '19a4c116b8d2d0c8 1e376c085141ab53 2748774cdf8eeb99 34b0bcb5e19b48a8 391c0cb3c5c95a63 4ed8aa4ae3418acb',
  '5b9cca4f7763e373 682e6ff3d6b2b8a3 748f82ee5defb2fc 78a5636f43172f60 84c87814a1f0ab72 8cc702081a6439ec',
  '90befffa23631e28 a4506cebde82bde9 bef9a3f7b2c67915 c67178f2e372532b ca273eceea26619c d186b8c721c0c207',
  'eada7dd6cde0eb1e f57d4f7fee6ed178 06f067aa72176fba 0a637dc5a2c898a6 113f9804bef90dae 1b710b35131c471b',
  '28db77f523047d84 32caab7b40c72493 3c9ebe0a15c9bebc 431d67c49c100d4c 4cc5d4becb3e42b6 597f299cfc657e2a',
  '5fcb6fab3ad6faec 6c44198c4a475817',
].join(' ');
// The first 64 bits of the fractional parts of the square roots of the first 8 primes (FIPS 180-4 5.3.5).
const H0_HEX = '6a09e667f3bcc908 bb67ae8584caa73b 3c6ef372fe94f82b a54ff53a5f1d36f1 510e527fade682d1 9b05688c2b3e6c1f 1f83d9abfb41bd6b 5be0cd19137e2179';
const TWO32 = 4294967296;

let K: Uint32Array | undefined;

/** 64-bit hex words as [hi, lo, hi, lo, ...]. */
function words(hex: string): Uint32Array {
  const list = hex.split(' ');
  const out = new Uint32Array(list.length * 2);
  list.forEach((w, i) => {
    out[2 * i] = parseInt(w.slice(0, 8), 16);
    out[2 * i + 1] = parseInt(w.slice(8), 16);
  });
  return out;
}

/** The message padded to whole 128-byte blocks (a 1 bit, zeros, the bit length in 128 bits). */
function pad(msg: Uint8Array): Uint8Array {
  const len = Math.ceil((msg.length + 17) / 128) * 128;
  const out = new Uint8Array(len);
  out.set(msg);
  out[msg.length] = 0x80;
  const bits = msg.length * 8;
  const dv = new DataView(out.buffer);
  dv.setUint32(len - 8, Math.floor(bits / TWO32), false);
  dv.setUint32(len - 4, bits >>> 0, false);
  return out;
}

/** Hex SHA-512 of the UTF-8 bytes of `s`. */
export function sha512Hex(s: string): string {
  K ??= words(K_HEX);
  const k = K;
  const h = words(H0_HEX);
  const data = pad(Buffer.from(s, 'utf8'));
  const dv = new DataView(data.buffer);
  const wh = new Uint32Array(80);
  const wl = new Uint32Array(80);
  for (let off = 0; off < data.length; off += 128) {
    for (let t = 0; t < 16; t++) {
      wh[t] = dv.getUint32(off + 8 * t, false);
      wl[t] = dv.getUint32(off + 8 * t + 4, false);
    }
    for (let t = 16; t < 80; t++) {
      let xh = wh[t - 15] as number;
      let xl = wl[t - 15] as number;
      // sigma0 = rotr 1 ^ rotr 8 ^ shr 7
      const s0h = ((xh >>> 1) | (xl << 31)) ^ ((xh >>> 8) | (xl << 24)) ^ (xh >>> 7);
      const s0l = ((xl >>> 1) | (xh << 31)) ^ ((xl >>> 8) | (xh << 24)) ^ ((xl >>> 7) | (xh << 25));
      xh = wh[t - 2] as number;
      xl = wl[t - 2] as number;
      // sigma1 = rotr 19 ^ rotr 61 ^ shr 6
      const s1h = ((xh >>> 19) | (xl << 13)) ^ ((xl >>> 29) | (xh << 3)) ^ (xh >>> 6);
      const s1l = ((xl >>> 19) | (xh << 13)) ^ ((xh >>> 29) | (xl << 3)) ^ ((xl >>> 6) | (xh << 26));
      const lo = (s0l >>> 0) + (s1l >>> 0) + (wl[t - 7] as number) + (wl[t - 16] as number);
      wl[t] = lo;
      wh[t] = (s0h >>> 0) + (s1h >>> 0) + (wh[t - 7] as number) + (wh[t - 16] as number) + Math.floor(lo / TWO32);
    }
    let [ah, al, bh, bl, ch, cl, dh, dl, eh, el, fh, fl, gh, gl, hh, hl] = h as unknown as number[] as [
      number, number, number, number, number, number, number, number, number, number, number, number, number, number, number, number,
    ];
    for (let t = 0; t < 80; t++) {
      // Sigma1(e) = rotr 14 ^ rotr 18 ^ rotr 41; Ch(e, f, g)
      const S1h = ((eh >>> 14) | (el << 18)) ^ ((eh >>> 18) | (el << 14)) ^ ((el >>> 9) | (eh << 23));
      const S1l = ((el >>> 14) | (eh << 18)) ^ ((el >>> 18) | (eh << 14)) ^ ((eh >>> 9) | (el << 23));
      const chh = (eh & fh) ^ (~eh & gh);
      const chl = (el & fl) ^ (~el & gl);
      const t1l = hl + (S1l >>> 0) + (chl >>> 0) + (k[2 * t + 1] as number) + (wl[t] as number);
      const t1h = hh + (S1h >>> 0) + (chh >>> 0) + (k[2 * t] as number) + (wh[t] as number) + Math.floor(t1l / TWO32);
      // Sigma0(a) = rotr 28 ^ rotr 34 ^ rotr 39; Maj(a, b, c)
      const S0h = ((ah >>> 28) | (al << 4)) ^ ((al >>> 2) | (ah << 30)) ^ ((al >>> 7) | (ah << 25));
      const S0l = ((al >>> 28) | (ah << 4)) ^ ((ah >>> 2) | (al << 30)) ^ ((ah >>> 7) | (al << 25));
      const mjh = (ah & bh) ^ (ah & ch) ^ (bh & ch);
      const mjl = (al & bl) ^ (al & cl) ^ (bl & cl);
      const t2l = (S0l >>> 0) + (mjl >>> 0);
      const t2h = (S0h >>> 0) + (mjh >>> 0) + Math.floor(t2l / TWO32);
      hh = gh; hl = gl; gh = fh; gl = fl; fh = eh; fl = el;
      const el2 = dl + (t1l >>> 0);
      eh = (dh + t1h + Math.floor(el2 / TWO32)) >>> 0;
      el = el2 >>> 0;
      dh = ch; dl = cl; ch = bh; cl = bl; bh = ah; bl = al;
      const al2 = (t1l >>> 0) + (t2l >>> 0);
      ah = (t1h + t2h + Math.floor(al2 / TWO32)) >>> 0;
      al = al2 >>> 0;
    }
    [ah, al, bh, bl, ch, cl, dh, dl, eh, el, fh, fl, gh, gl, hh, hl].forEach((v, i) => {
      if (i % 2 === 1) return;
      const lo = (h[i + 1] as number) + ([ah, al, bh, bl, ch, cl, dh, dl, eh, el, fh, fl, gh, gl, hh, hl][i + 1] as number);
      h[i] = (h[i] as number) + v + Math.floor(lo / TWO32);
      h[i + 1] = lo;
    });
  }
  return Array.from(h, (x) => x.toString(16).padStart(8, '0')).join('');
}
