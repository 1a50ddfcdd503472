// WeClaw phone link, protocol v1 (the desktop side is weclaw_desktop/companion/{crypto,wire,sessions}.py).
// Plain HTTP on a LAN is not a secure context: no WebCrypto. The audited pure-JS @noble libraries are
// vendored next to this file (never loaded from a CDN); crypto.getRandomValues works without a secure context.
import { chacha20poly1305 } from "./vendor/noble-ciphers/chacha.js";
import { hkdf } from "./vendor/noble-hashes/hkdf.js";
import { hmac } from "./vendor/noble-hashes/hmac.js";
import { sha256 } from "./vendor/noble-hashes/sha2.js";

export const V = "weclaw/v1";
export const RECORD = 1 << 20;
export const TAG = 16;
export const SALT = 16;
const API = "/api/v1";
const enc = new TextEncoder();
const dec = new TextDecoder();
const EMPTY = new Uint8Array(0);

export function b64e(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
export function b64d(text) {
  const s = atob(String(text).replace(/-/g, "+").replace(/_/g, "/"));
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
export function rand(n) { const a = new Uint8Array(n); crypto.getRandomValues(a); return a; }
export function utf8(s) { return enc.encode(s); }
export function concat(parts) {
  let n = 0; for (const p of parts) n += p.length;
  const out = new Uint8Array(n); let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}
export function kdf(ikm, info, salt, length) {
  return hkdf(sha256, ikm, salt || EMPTY, enc.encode(V + "/" + info), length || 32);
}
export function mac(key, parts) { return hmac(sha256, key, enc.encode(parts.join("\n"))); }
function same(a, b) {
  if (a.length !== b.length) return false;
  let d = 0; for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i];
  return d === 0;
}
export function digest(bytes) { return b64e(sha256(bytes)); }
export function seal(key, plaintext, ad) {
  const nonce = rand(12);
  return { n: b64e(nonce), c: b64e(chacha20poly1305(key, nonce, enc.encode(ad)).encrypt(plaintext)) };
}
export function unseal(key, env, ad) {
  if (!env || typeof env.n !== "string" || typeof env.c !== "string") throw new Error("not sealed");
  return chacha20poly1305(key, b64d(env.n), enc.encode(ad)).decrypt(b64d(env.c));
}
function nonceOf(i) {
  const n = new Uint8Array(12);
  const v = new DataView(n.buffer);
  v.setUint32(4, Math.floor(i / 4294967296)); v.setUint32(8, i >>> 0);
  return n;
}
export function recordCount(size) { return Math.max(1, Math.ceil(size / RECORD)); }
export function recordLen(size, i) { return size ? Math.min(RECORD, size - i * RECORD) : 0; }

// The records of one file within one request or response: a fresh salt, a key derived from it.
export class Records {
  constructor(fileKey, fileId, size, salt) {
    this.salt = salt || rand(SALT);
    this.key = kdf(fileKey, "records", this.salt);
    this.fileId = fileId; this.size = size; this.count = recordCount(size);
  }
  ad(i) { return enc.encode(V + "/rec|" + this.fileId + "|" + i + "|" + this.count + "|" + this.size); }
  seal(i, plain) { return chacha20poly1305(this.key, nonceOf(i), this.ad(i)).encrypt(plain); }
  open(i, sealed) { return chacha20poly1305(this.key, nonceOf(i), this.ad(i)).decrypt(sealed); }
}

export class LinkError extends Error {
  constructor(status, code, message, trusted, data) {
    super(message || code || ("http " + status));
    this.status = status; this.code = code || ""; this.trusted = !!trusted; this.data = data || {};
  }
}

// --- pairing: prove the QR secret without sending it ------------------------------------------------
export function secretFromHash(hash) {
  const m = /[#&]s=([A-Za-z0-9_-]{43})(?:&|$)/.exec(hash || "");
  return m ? b64d(m[1]) : null;
}

export async function pair(secret, name, phone) {
  const pid = b64e(kdf(secret, "pair-id", null, 9));
  const key = kdf(secret, "pair-key");
  const nonce = b64e(rand(16));
  const req = seal(key, enc.encode(JSON.stringify({ name: name, phone: phone, nonce: nonce })), V + "/pair-req|" + pid);
  const res = await post("/pair", { pid: pid, req: req });
  if (res.status !== 200) throw new LinkError(res.status, res.data.code, res.data.error, false, res.data);
  const granted = JSON.parse(dec.decode(unseal(key, res.data.res, V + "/pair-res|" + pid + "|" + nonce)));
  return { device: granted.device, gen: granted.gen, key: granted.key, name: granted.name,
           desktop: granted.desktop, expiresAt: granted.expires_at, phone: phone };
}

async function post(path, body) {
  const r = await fetch(API + path, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    cache: "no-store", credentials: "omit",
  });
  let data = {};
  try { data = await r.json(); } catch (e) { data = {}; }
  return { status: r.status, data: data };
}

// --- a session: every later request is signed, every body sealed ---------------------------------------
export class Link {
  constructor(creds, hooks) {
    this.creds = creds;               // {device, gen, key (b64), phone, ...}
    this.hooks = hooks || {};         // onRenew(creds), onGone(code)
    this.sid = ""; this.seqs = {}; this.lanes = {};
  }

  async open() {
    const hello = await post("/hello", {});
    if (hello.status !== 200) throw new LinkError(hello.status, hello.data.code, hello.data.error);
    const dk = b64d(this.creds.key);
    const nonce = b64e(rand(16));
    const ch = hello.data.challenge;
    const parts = [V + "/session", this.creds.device, String(this.creds.gen), ch, nonce];
    const res = await post("/session", { device: this.creds.device, gen: this.creds.gen, challenge: ch, nonce: nonce,
                                         mac: b64e(mac(dk, parts)) });
    if (res.status !== 200) {
      const code = res.data.code;
      // A 'revoked' or 'expired' answer counts only if the desktop proves it with this phone's key.
      const trusted = (code === "revoked" || code === "expired") && typeof res.data.proof === "string" &&
        same(b64d(res.data.proof), mac(dk, [V + "/gone", code, ch, nonce]));
      throw new LinkError(res.status, code, res.data.error, trusted, res.data);
    }
    const proof = b64d(res.data.proof);
    if (!same(proof, mac(dk, [V + "/session-ok", res.data.session, ch, nonce]))) throw new LinkError(0, "auth", "the desktop did not prove its key");
    this.sid = res.data.session; this.seqs = {};
    const base = kdf(dk, "session|" + this.sid, concat([b64d(ch), b64d(nonce)]));
    this.macKey = kdf(base, "session-mac"); this.c2s = kdf(base, "c2s"); this.s2c = kdf(base, "s2c");
    const info = JSON.parse(dec.decode(unseal(this.s2c, res.data.info, V + "/session-info|" + this.sid)));
    if (info.renew) {   // the key is old: the desktop issued the next generation
      this.creds = Object.assign({}, this.creds, { gen: info.renew.gen, key: info.renew.key, expiresAt: info.renew.expires_at });
      if (this.hooks.onRenew) await this.hooks.onRenew(this.creds);
    }
    this.info = info;
    return info;
  }

  sign(method, path, lane, bodyDigest) {
    const seq = (this.seqs[lane] || 0) + 1;
    this.seqs[lane] = seq;
    const tag = mac(this.macKey, [V + "/req", method, path, lane, String(seq), bodyDigest]);
    return { seq: seq, header: this.sid + "." + lane + "." + seq + "." + b64e(tag) };
  }

  // Requests on one lane go one after another (the desktop refuses a lower sequence number).
  onLane(lane, fn) {
    const prev = this.lanes[lane] || Promise.resolve();
    const next = prev.catch(function () {}).then(fn);
    this.lanes[lane] = next.catch(function () {});
    return next;
  }

  answer(lane, seq, status, data) {
    if (data && typeof data.c === "string") {
      return { trusted: true, data: JSON.parse(dec.decode(unseal(this.s2c, data, V + "/resp|" + lane + "|" + seq + "|" + status))) };
    }
    return { trusted: false, data: data || {} };
  }

  async retrying(fn) {
    if (!this.sid) await this.open();
    try { return await fn(); }
    catch (e) {
      if (e instanceof LinkError && !e.trusted && e.status === 401) { await this.open(); return await fn(); }
      throw e;
    }
  }

  call(path, body) {
    const self = this;
    return this.retrying(function () {
      return self.onLane("ctl", async function () {
        const seq = (self.seqs.ctl || 0) + 1;
        const raw = enc.encode(JSON.stringify(seal(self.c2s, enc.encode(JSON.stringify(body || {})), V + "/req|POST|" + API + path + "|ctl|" + seq)));
        const s = self.sign("POST", API + path, "ctl", digest(raw));
        const r = await fetch(API + path, { method: "POST", body: raw, cache: "no-store", credentials: "omit",
          headers: { "Content-Type": "application/json", "X-WeClaw-Auth": s.header } });
        let data = {};
        try { data = await r.json(); } catch (e) { data = {}; }
        const a = self.answer("ctl", s.seq, r.status, data);
        if (r.status !== 200) throw new LinkError(r.status, a.data.code, a.data.error, a.trusted, a.data);
        return a.data;
      });
    });
  }

  // A signed GET whose body streams. prep() gives {path, onBytes} for each attempt (a retry after a new
  // session starts afresh); onBytes gets the raw bytes as they come.
  async stream(prep, lane, signal) {
    const self = this;
    return this.retrying(function () {
      return self.onLane(lane, async function () {
        const p = prep();
        const path = p.path, onBytes = p.onBytes;
        const s = self.sign("GET", API + path, lane, digest(EMPTY));
        const r = await fetch(API + path, { headers: { "X-WeClaw-Auth": s.header }, cache: "no-store",
          credentials: "omit", signal: signal });
        if (r.status !== 200) {
          let data = {};
          try { data = await r.json(); } catch (e) { data = {}; }
          const a = self.answer(lane, s.seq, r.status, data);
          throw new LinkError(r.status, a.data.code, a.data.error, a.trusted, a.data);
        }
        const reader = r.body.getReader();
        for (;;) {
          const part = await reader.read();
          if (part.done) break;
          await onBytes(part.value, s.seq);
        }
      });
    });
  }

  // Records `from`.. of an offered file, each opened and checked, passed to onRecord(index, plaintext).
  download(offer, file, from, onRecord, signal) {
    let got = from;
    return this.stream(function () {
      let pending = [], have = 0, recs = null;
      function take(n) {   // the first n pending bytes as one array (each byte is copied once)
        const flat = pending.length === 1 ? pending[0] : concat(pending);
        const out = flat.subarray(0, n);
        pending = flat.length > n ? [flat.subarray(n)] : [];
        have = flat.length - n;
        return out;
      }
      return { path: "/download?o=" + offer + "&f=" + file.id + "&from=" + got, onBytes: async function (bytes) {
        pending.push(bytes); have += bytes.length;
        if (!recs) {
          if (have < SALT) return;
          recs = new Records(b64d(file.key), file.id, file.size, take(SALT).slice());
        }
        for (;;) {
          const need = recordLen(file.size, got) + TAG;
          if (got >= recs.count || have < need) break;
          let plain;
          try { plain = recs.open(got, take(need)); }
          catch (e) { throw new LinkError(0, "damaged", "record " + got + " did not authenticate", true); }
          await onRecord(got, plain);
          got += 1;
        }
      } };
    }, "dl:" + file.id, signal).then(function () { return got; }, function (e) { e.got = got; throw e; });
  }

  // Sends records [from, from + count) of a file; readPlain(i) gives record i's plaintext.
  upload(upload, fileId, key, size, from, count, readPlain) {
    const self = this;
    const lane = "up:" + fileId;
    return this.retrying(function () {
      return self.onLane(lane, async function () {
        const recs = new Records(b64d(key), fileId, size);
        const parts = [recs.salt];
        const end = Math.min(recs.count, from + count);
        for (let i = from; i < end; i++) parts.push(recs.seal(i, await readPlain(i)));
        const path = API + "/upload?u=" + upload + "&f=" + fileId + "&from=" + from;
        const s = self.sign("POST", path, lane, "salt:" + b64e(recs.salt));
        const r = await fetch(path, { method: "POST", body: new Blob(parts), cache: "no-store", credentials: "omit",
          headers: { "Content-Type": "application/octet-stream", "X-WeClaw-Auth": s.header } });
        let data = {};
        try { data = await r.json(); } catch (e) { data = {}; }
        const a = self.answer(lane, s.seq, r.status, data);
        if (r.status !== 200) throw new LinkError(r.status, a.data.code, a.data.error, a.trusted, a.data);
        return a.data;
      });
    });
  }

  // The live event stream: sealed frames (4-byte length + ciphertext), each passed to onEvent(kind, data).
  events(onEvent, signal) {
    const self = this;
    return this.stream(function () {
      let buf = new Uint8Array(0), key = null, index = 0, label = "";
      return { path: "/events", onBytes: async function (bytes, seq) {
      label = String(seq);
      buf = buf.length ? concat([buf, bytes]) : bytes;
      if (!key) {
        if (buf.length < SALT) return;
        key = kdf(self.s2c, "events", buf.slice(0, SALT));
        buf = buf.subarray(SALT);
      }
      for (;;) {
        if (buf.length < 4) break;
        const n = new DataView(buf.buffer, buf.byteOffset, 4).getUint32(0);
        if (buf.length < 4 + n) break;
        const plain = chacha20poly1305(key, nonceOf(index), enc.encode(V + "/ev|" + label + "|" + index)).decrypt(buf.subarray(4, 4 + n));
        buf = buf.subarray(4 + n); index += 1;
        const ev = JSON.parse(dec.decode(plain));
        await onEvent(ev.kind, ev.data || {});
      }
      } };
    }, "ev", signal);
  }
}
