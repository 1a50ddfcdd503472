// What the phone page keeps across reloads, sleep and desktop restarts: IndexedDB (works on plain HTTP).
//   meta    key -> value              the pairing (device id, key generation, device key), settings
//   files   "offer/file" -> record    received files: state, records held, CRC-32 (for the zip), name, size
//   chunks  [fileKey, first] -> Blob  the plaintext of records first.. (a group), held for resume and save
//   uploads id -> record              files sent to the computer, with the File itself when the browser allows
// Without IndexedDB (some private modes) everything is kept in memory for this visit only.

const NAME = "weclaw";
const VERSION = 1;
let db = null;
const mem = { meta: new Map(), files: new Map(), chunks: new Map(), uploads: new Map() };

function req(r) {
  return new Promise(function (resolve, reject) {
    r.onsuccess = function () { resolve(r.result); };
    r.onerror = function () { reject(r.error); };
  });
}
function done(tx) {
  return new Promise(function (resolve, reject) {
    tx.oncomplete = function () { resolve(); };
    tx.onerror = function () { reject(tx.error); };
    tx.onabort = function () { reject(tx.error || new Error("aborted")); };
  });
}

export async function open() {
  if (!("indexedDB" in self)) return false;
  try {
    const r = indexedDB.open(NAME, VERSION);
    r.onupgradeneeded = function () {
      const d = r.result;
      d.createObjectStore("meta");
      d.createObjectStore("files", { keyPath: "key" });
      d.createObjectStore("chunks");
      d.createObjectStore("uploads", { keyPath: "id" });
    };
    db = await req(r);
    return true;
  } catch (e) {
    db = null;
    return false;
  }
}
export function persistent() { return db !== null; }

export async function get(store, key) {
  if (!db) return mem[store].get(key);
  return req(db.transaction(store).objectStore(store).get(key));
}
export async function put(store, value, key) {
  if (!db) { mem[store].set(key !== undefined ? key : value.key || value.id, value); return; }
  const tx = db.transaction(store, "readwrite");
  if (key !== undefined) tx.objectStore(store).put(value, key); else tx.objectStore(store).put(value);
  await done(tx);
}
export async function del(store, key) {
  if (!db) { mem[store].delete(key); return; }
  const tx = db.transaction(store, "readwrite");
  tx.objectStore(store).delete(key);
  await done(tx);
}
export async function all(store) {
  if (!db) return Array.from(mem[store].values());
  return req(db.transaction(store).objectStore(store).getAll());
}

// One group of records and the file record that now counts them, in one transaction (never one without the other).
export async function putChunk(fileKey, first, blob, fileRecord) {
  if (!db) { mem.chunks.set(fileKey + "|" + first, blob); mem.files.set(fileRecord.key, fileRecord); return; }
  const tx = db.transaction(["chunks", "files"], "readwrite");
  tx.objectStore("chunks").put(blob, [fileKey, first]);
  tx.objectStore("files").put(fileRecord);
  await done(tx);
}

// The file's plaintext as one Blob (the browser keeps the parts on disk; nothing is copied into memory).
export async function fileBlob(fileKey, type) {
  let parts;
  if (!db) {
    parts = Array.from(mem.chunks.entries()).filter(function (e) { return e[0].split("|")[0] === fileKey; })
      .sort(function (a, b) { return Number(a[0].split("|")[1]) - Number(b[0].split("|")[1]); })
      .map(function (e) { return e[1]; });
  } else {
    const range = IDBKeyRange.bound([fileKey, 0], [fileKey, Number.MAX_SAFE_INTEGER]);
    parts = await req(db.transaction("chunks").objectStore("chunks").getAll(range));
  }
  return new Blob(parts, { type: type || "application/octet-stream" });
}

export async function dropChunks(fileKey, from) {
  if (!db) {
    Array.from(mem.chunks.keys()).forEach(function (k) {
      const p = k.split("|");
      if (p[0] === fileKey && Number(p[1]) >= (from || 0)) mem.chunks.delete(k);
    });
    return;
  }
  const tx = db.transaction("chunks", "readwrite");
  tx.objectStore("chunks").delete(IDBKeyRange.bound([fileKey, from || 0], [fileKey, Number.MAX_SAFE_INTEGER]));
  await done(tx);
}

export async function clearAll() {
  if (!db) { Object.keys(mem).forEach(function (k) { mem[k].clear(); }); return; }
  const tx = db.transaction(["meta", "files", "chunks", "uploads"], "readwrite");
  ["meta", "files", "chunks", "uploads"].forEach(function (s) { tx.objectStore(s).clear(); });
  await done(tx);
}
