/* Incremental SHA-256 (FIPS 180-4) in plain JavaScript.
 * The phone page runs on plain HTTP, which is not a secure context: crypto.subtle is missing there.
 * Usage: var h = new Sha256(); h.update(uint8array); ...; h.hex() -> 64 hex digits. */
(function (global) {
  "use strict";
  var K = new Int32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
  ]);

  function Sha256() {
    this.h = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
    this.w = new Int32Array(64);
    this.buf = new Uint8Array(64);
    this.bufLen = 0;
    this.length = 0; // bytes so far (a Number: exact up to 2^53)
    this.finished = false;
  }

  Sha256.prototype._blocks = function (d, off, end) {
    var w = this.w, h = this.h;
    var h0 = h[0], h1 = h[1], h2 = h[2], h3 = h[3], h4 = h[4], h5 = h[5], h6 = h[6], h7 = h[7];
    var i, t1, t2, x, y, a, b, c, e, f, g, hh, dd;
    for (; off + 64 <= end; off += 64) {
      for (i = 0; i < 16; i++) {
        var j = off + i * 4;
        w[i] = (d[j] << 24) | (d[j + 1] << 16) | (d[j + 2] << 8) | d[j + 3];
      }
      for (i = 16; i < 64; i++) {
        x = w[i - 15]; y = w[i - 2];
        w[i] = (((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)) +
               (((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10)) +
               w[i - 7] + w[i - 16] | 0;
      }
      a = h0; b = h1; c = h2; dd = h3; e = h4; f = h5; g = h6; hh = h7;
      for (i = 0; i < 64; i++) {
        t1 = hh + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
             ((e & f) ^ (~e & g)) + K[i] + w[i] | 0;
        t2 = (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
             ((a & b) ^ (a & c) ^ (b & c)) | 0;
        hh = g; g = f; f = e; e = dd + t1 | 0; dd = c; c = b; b = a; a = t1 + t2 | 0;
      }
      h0 = h0 + a | 0; h1 = h1 + b | 0; h2 = h2 + c | 0; h3 = h3 + dd | 0;
      h4 = h4 + e | 0; h5 = h5 + f | 0; h6 = h6 + g | 0; h7 = h7 + hh | 0;
    }
    h[0] = h0; h[1] = h1; h[2] = h2; h[3] = h3; h[4] = h4; h[5] = h5; h[6] = h6; h[7] = h7;
    return off;
  };

  /** Add bytes (a Uint8Array or an ArrayBuffer). Returns this. */
  Sha256.prototype.update = function (data) {
    if (this.finished) throw new Error("Sha256: update after hex()");
    var d = data instanceof Uint8Array ? data : new Uint8Array(data);
    var off = 0, n = d.length;
    this.length += n;
    if (this.bufLen > 0) {
      var take = Math.min(64 - this.bufLen, n);
      this.buf.set(d.subarray(0, take), this.bufLen);
      this.bufLen += take; off = take;
      if (this.bufLen < 64) return this;
      this._blocks(this.buf, 0, 64);
      this.bufLen = 0;
    }
    off = this._blocks(d, off, n);
    if (off < n) { this.buf.set(d.subarray(off), 0); this.bufLen = n - off; }
    return this;
  };

  /** Finish and return the digest as 64 lowercase hex digits. */
  Sha256.prototype.hex = function () {
    if (!this.finished) {
      var bits = this.length * 8;
      var pad = new Uint8Array(this.bufLen < 56 ? 64 : 128);
      pad.set(this.buf.subarray(0, this.bufLen));
      pad[this.bufLen] = 0x80;
      var hi = Math.floor(bits / 4294967296), lo = bits >>> 0;
      var p = pad.length - 8;
      pad[p] = hi >>> 24; pad[p + 1] = hi >>> 16; pad[p + 2] = hi >>> 8; pad[p + 3] = hi;
      pad[p + 4] = lo >>> 24; pad[p + 5] = lo >>> 16; pad[p + 6] = lo >>> 8; pad[p + 7] = lo;
      this._blocks(pad, 0, pad.length);
      this.finished = true;
    }
    var out = "";
    for (var i = 0; i < 8; i++) out += ("00000000" + (this.h[i] >>> 0).toString(16)).slice(-8);
    return out;
  };

  global.Sha256 = Sha256;
})(typeof window !== "undefined" ? window : this);
