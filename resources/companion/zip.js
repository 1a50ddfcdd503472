// Several received files saved with one tap: a ZIP archive (stored, not compressed) built from the Blobs
// the page already holds. CRC-32 is computed while each file arrives, so the archive is ready at once.

const TABLE = (function () {
  const t = new Uint32Array(256 * 8);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n];
    for (let k = 1; k < 8; k++) { c = t[c & 255] ^ (c >>> 8); t[k * 256 + n] = c >>> 0; }
  }
  return t;
})();

// crc32(prev, bytes): continue a CRC-32 (start with 0). Slicing-by-8.
export function crc32(prev, bytes) {
  let c = ~prev >>> 0, i = 0;
  const n = bytes.length, T = TABLE;
  for (; i + 8 <= n; i += 8) {
    const a = (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24)) ^ c;
    const b = bytes[i + 4] | (bytes[i + 5] << 8) | (bytes[i + 6] << 16) | (bytes[i + 7] << 24);
    c = T[1792 + (a & 255)] ^ T[1536 + ((a >>> 8) & 255)] ^ T[1280 + ((a >>> 16) & 255)] ^ T[1024 + (a >>> 24)] ^
        T[768 + (b & 255)] ^ T[512 + ((b >>> 8) & 255)] ^ T[256 + ((b >>> 16) & 255)] ^ T[b >>> 24];
  }
  for (; i < n; i++) c = T[(c ^ bytes[i]) & 255] ^ (c >>> 8);
  return ~c >>> 0;
}

export const ZIP_LIMIT = 0xfffffffe;  // no ZIP64: the archive stays under 4 GiB (else files are saved one by one)

function dosTime(d) {
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1),
    date: ((d.getFullYear() - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}

function uniqueNames(entries) {
  const seen = new Set();
  return entries.map(function (e) {
    let name = e.name, i = 2;
    const dot = name.lastIndexOf(".");
    const stem = dot > 0 ? name.slice(0, dot) : name, ext = dot > 0 ? name.slice(dot) : "";
    while (seen.has(name.toLowerCase())) name = stem + " (" + (i++) + ")" + ext;
    seen.add(name.toLowerCase());
    return name;
  });
}

// entries: [{name, blob, size, crc}] -> Blob (application/zip)
export function makeZip(entries, when) {
  const enc = new TextEncoder();
  const t = dosTime(when || new Date());
  const names = uniqueNames(entries);
  const parts = [], central = [];
  let offset = 0;
  entries.forEach(function (e, k) {
    const name = enc.encode(names[k]);
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true); local.setUint16(4, 20, true); local.setUint16(6, 0x0800, true);
    local.setUint16(8, 0, true); local.setUint16(10, t.time, true); local.setUint16(12, t.date, true);
    local.setUint32(14, e.crc >>> 0, true); local.setUint32(18, e.size, true); local.setUint32(22, e.size, true);
    local.setUint16(26, name.length, true); local.setUint16(28, 0, true);
    parts.push(local.buffer, name, e.blob);
    const cd = new DataView(new ArrayBuffer(46));
    cd.setUint32(0, 0x02014b50, true); cd.setUint16(4, 20, true); cd.setUint16(6, 20, true);
    cd.setUint16(8, 0x0800, true); cd.setUint16(10, 0, true); cd.setUint16(12, t.time, true);
    cd.setUint16(14, t.date, true); cd.setUint32(16, e.crc >>> 0, true); cd.setUint32(20, e.size, true);
    cd.setUint32(24, e.size, true); cd.setUint16(28, name.length, true); cd.setUint32(42, offset, true);
    central.push(cd.buffer, name);
    offset += 30 + name.length + e.size;
  });
  let cdSize = 0;
  central.forEach(function (p) { cdSize += p.byteLength; });
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true); end.setUint16(8, entries.length, true); end.setUint16(10, entries.length, true);
  end.setUint32(12, cdSize, true); end.setUint32(16, offset, true);
  return new Blob(parts.concat(central, [end.buffer]), { type: "application/zip" });
}
