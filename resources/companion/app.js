// WeClaw phone page: pair with the computer, receive files (every record authenticated), send files.
// Everything the page knows is kept in IndexedDB, so a reload, the phone sleeping or the computer restarting
// loses nothing: transfers continue at the first record missing. "Saved" is reported to the computer only
// when the browser's save was started by a tap (browsers drop bursts of script-started downloads).
import * as proto from "./proto.js";
import * as store from "./store.js";
import { crc32, makeZip, ZIP_LIMIT } from "./zip.js";
import { detect, errorText, translate } from "./i18n.js";

const GROUP = 4;                 // records per stored chunk
const STALE_MS = 40000;          // the computer sends a frame at least every 15 s
const UP_BATCH = 4;              // records per upload request
const FATAL = { not_found: 1, cancelled: 1, finished: 1, changed: 1, too_large: 1, too_many: 1, quota: 1,
                reserve: 1, no_space: 1, revoked: 1, expired: 1, unknown: 1 };

let lang = detect(localStorage.getItem("weclaw.lang"), navigator.language);
let creds = null, link = null, me = null, statusKey = "connecting";
let evAbort = null, lastBeat = 0, connecting = false, backoff = 1000, retryTimer = null;
let phoneId = "";
let confirmUnpair = false;
const files = new Map();         // "offer/file" -> record
const uploads = new Map();       // id -> record (without the File)
const blobs = new Map();         // "offer/file" -> Blob of a complete file
const heldFiles = new Map();     // upload id -> File (when the browser would not store it)
const busy = new Set();
let pumping = false;

function $(id) { return document.getElementById(id); }
function t(key, vars) { return translate(lang, key, vars); }
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function size(n) {
  const u = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)) + " " + u[i];
}
function sleep(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }
function userActive() { return navigator.userActivation ? navigator.userActivation.isActive : true; }

// --- language and chrome -----------------------------------------------------------------------------
function applyLang() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  $("lang").textContent = lang === "zh" ? "EN" : "中文";
  document.querySelectorAll("[data-i18n]").forEach(function (n) { n.textContent = t(n.getAttribute("data-i18n")); });
  setStatus(statusKey);
  if ($("notice").dataset.key) notice($("notice").dataset.key, $("notice").classList.contains("bad"));
  render();
}
$("lang").addEventListener("click", function () {
  lang = lang === "zh" ? "en" : "zh";
  localStorage.setItem("weclaw.lang", lang);
  applyLang();
});
function setStatus(key) {
  statusKey = key;
  $("status").className = "status " + (key === "online" ? "online" : key === "offline" || key === "unpaired" ? "offline" : "connecting");
  $("status-text").textContent = t(key);
}
// notice(textKey or error code as "err.x", bad)
function notice(key, bad) {
  const box = $("notice");
  box.hidden = !key;
  box.dataset.key = key || "";
  box.className = "card notice" + (bad ? " bad" : "");
  $("notice-text").textContent = key ? t(key) : "";
}
function showPaired(paired) {
  $("pair-card").hidden = paired;
  $("receive-card").hidden = !paired && files.size === 0;
  $("send-card").hidden = !paired;
}

// --- the pairing ------------------------------------------------------------------------------------
function deviceName() {
  const ua = navigator.userAgent || "";
  const m = ua.match(/Android [\d.]+; ([^;)]+?)(?: Build|\))/);
  if (m && m[1] && m[1] !== "K") return m[1].trim();
  if (/iPhone/.test(ua)) return "iPhone";
  if (/iPad/.test(ua)) return "iPad";
  if (/Android/.test(ua)) return "Android";
  return lang === "zh" ? "手机" : "Phone";
}

async function pairWith(secret) {
  setStatus("connecting");
  showPaired(false);
  notice("pairing", false);
  try {
    const granted = await proto.pair(secret, deviceName(), phoneId);
    creds = granted;
    await store.put("meta", creds, "creds");
    notice("", false);
    await connect();
  } catch (e) {
    setStatus(creds ? "offline" : "unpaired");
    notice(e instanceof proto.LinkError && e.code ? "err." + e.code : "err.network", true);
    if (creds) connect();
  }
}

async function forgetPairing(code) {
  if (evAbort) { evAbort.abort(); evAbort = null; }
  creds = null; link = null; me = null;
  await store.del("meta", "creds");
  showPaired(false);
  setStatus("unpaired");
  if (code) notice("err." + code, true);
  render();
}

async function unpairHere() {
  const old = creds, oldLink = link;
  await forgetPairing("");
  try { if (oldLink) await oldLink.call("/unpair", {}); }
  catch (e) { await store.put("meta", old, "pendingUnpair"); }   // told the next time the computer is reachable
}

async function sendPendingUnpair() {
  const pending = await store.get("meta", "pendingUnpair");
  if (!pending) return;
  try { await new proto.Link(pending).call("/unpair", {}); await store.del("meta", "pendingUnpair"); }
  catch (e) { if (e instanceof proto.LinkError && e.status) await store.del("meta", "pendingUnpair"); }
}

// --- connection --------------------------------------------------------------------------------------
function reconnectSoon() {
  clearTimeout(retryTimer);
  retryTimer = setTimeout(connect, backoff);
  backoff = Math.min(backoff * 2, 15000);
}

async function connect() {
  if (!creds || connecting) return;
  connecting = true;
  clearTimeout(retryTimer);
  setStatus("connecting");
  try {
    link = new proto.Link(creds, { onRenew: async function (c) { creds = c; await store.put("meta", c, "creds"); } });
    me = await link.open();
    showPaired(true);
    if (["err.session", "err.auth", "err.unknown", "err.network", "err.replay"].indexOf($("notice").dataset.key) >= 0) notice("", false);
    await merge(await link.call("/state", {}));
    startEvents();
    backoff = 1000;
    reportAcks();
    resumeUploads();
    pump();
  } catch (e) {
    link = null;
    if (e instanceof proto.LinkError && e.trusted && (e.code === "revoked" || e.code === "expired")) {
      connecting = false;
      await forgetPairing(e.code);
      return;
    }
    setStatus("offline");
    if (e instanceof proto.LinkError && (e.code === "unknown" || e.code === "auth")) notice("err." + e.code, true);
    reconnectSoon();
  } finally {
    connecting = false;
  }
}

function startEvents() {
  if (evAbort) evAbort.abort();
  const ac = new AbortController();
  evAbort = ac;
  lastBeat = Date.now();
  link.events(onEvent, ac.signal).then(function () {
    if (evAbort === ac) { evAbort = null; setStatus("offline"); reconnectSoon(); }
  }, function () {
    if (evAbort === ac) { evAbort = null; setStatus("offline"); reconnectSoon(); }
  });
}

async function onEvent(kind, data) {
  lastBeat = Date.now();
  if (statusKey !== "online") setStatus("online");
  if (kind === "hello") { await merge(data); pump(); }
  else if (kind === "offer") { await addOffer(data); render(); pump(); }
  else if (kind === "cancel") {
    for (const rec of files.values()) {
      if (rec.offer === data.offer && (rec.state === "waiting" || rec.state === "downloading")) { rec.state = "cancelled"; await saveFile(rec); }
    }
    render();
  } else if (kind === "state") {
    const rec = files.get(data.offer + "/" + data.file);
    if (rec && data.state === "failed" && rec.state !== "saved" && rec.state !== "ready") { rec.state = "failed"; rec.error = "changed"; await saveFile(rec); render(); }
  } else if (kind === "upload_cancel") {
    for (const u of uploads.values()) if (u.upload === data.upload && u.state !== "sent") { u.state = "failed"; u.error = "cancelled"; await saveUpload(u); }
    render();
  } else if (kind === "revoked") {
    await forgetPairing("revoked");
  }
}

// Phones freeze pages in the background: check the stream when the page comes back or goes quiet.
function watchdog() {
  if (!creds) return;
  if (!link && !connecting) { connect(); return; }
  if (evAbort && Date.now() - lastBeat > STALE_MS) { evAbort.abort(); evAbort = null; setStatus("offline"); connect(); }
}
setInterval(watchdog, 5000);
document.addEventListener("visibilitychange", function () { if (!document.hidden) watchdog(); });
window.addEventListener("online", function () { backoff = 1000; watchdog(); });
window.addEventListener("pageshow", watchdog);

// --- received files ----------------------------------------------------------------------------------
function saveFile(rec) { return store.put("files", rec); }

async function addOffer(o) {
  for (const f of o.files) {
    const key = o.offer + "/" + f.id;
    if (files.has(key)) continue;
    const rec = { key: key, offer: o.offer, id: f.id, name: f.name, size: f.size, mime: f.mime || "application/octet-stream",
      records: f.records, fileKey: f.key, state: "waiting", have: 0, crc: null, at: o.created_at || Date.now() / 1000,
      want: false, reported: "", error: "" };
    files.set(key, rec);
    await saveFile(rec);
  }
}

async function merge(snapshot) {
  if (snapshot.desktop && me) me.desktop = snapshot.desktop;
  const offered = new Set();
  for (const o of snapshot.offers || []) {
    await addOffer(o);
    o.files.forEach(function (f) { offered.add(o.offer + "/" + f.id); });
  }
  for (const rec of files.values()) {
    if ((rec.state === "waiting" || rec.state === "downloading") && !offered.has(rec.key) && !busy.has(rec.key)) {
      rec.state = "cancelled"; await saveFile(rec);
    }
  }
  for (const up of snapshot.uploads || []) {
    for (const u of uploads.values()) {
      const st = up.files[u.id];
      if (u.upload === up.upload && st && u.state !== "sent") u.sent = st.received;
    }
  }
  render();
}

function auto() { return $("auto").checked; }

// Downloads run one at a time, oldest first: the ones started by a tap, then (if on) all the others.
async function pump() {
  if (pumping) return;
  pumping = true;
  try {
    for (;;) {
      if (!link) return;
      const next = Array.from(files.values()).filter(function (r) {
        return !busy.has(r.key) && (r.state === "downloading" || (r.state === "waiting" && (r.want || auto())));
      }).sort(function (a, b) { return (b.want - a.want) || (a.at - b.at); })[0];
      if (!next) return;
      await fetchFile(next);
    }
  } finally { pumping = false; }
}

async function fetchFile(rec) {
  busy.add(rec.key);
  rec.state = "downloading"; rec.error = ""; rec.detail = "";
  await saveFile(rec);
  render();
  let tries = 0;
  try {
    while (rec.have < rec.records) {
      let group = [], groupStart = rec.have;
      const onRecord = async function (i, plain) {
        if (!group.length) groupStart = i;
        group.push(plain);
        showProgress(rec, i + 1);
        if (group.length === GROUP || i === rec.records - 1) {
          const updated = Object.assign({}, rec, { have: i + 1 });
          await store.putChunk(rec.key, groupStart, new Blob(group), updated);
          group = [];
          rec.have = i + 1;
        }
      };
      try {
        if (!link) throw new proto.LinkError(0, "network");
        await link.download(rec.offer, { id: rec.id, key: rec.fileKey, size: rec.size }, rec.have, onRecord);
        tries = 0;
        if (rec.have < rec.records) throw new proto.LinkError(0, "network", "the download ended early");
      } catch (e) {
        const code = e instanceof proto.LinkError ? e.code : (e && e.name === "QuotaExceededError" ? "storage" : "network");
        if (FATAL[code] || code === "storage") {
          rec.state = code === "cancelled" ? "cancelled" : "failed"; rec.error = code;
          await saveFile(rec); render();
          return;
        }
        rec.detail = code === "damaged" ? "damaged" : "network";
        render();
        if (++tries > 6) { rec.state = "failed"; rec.error = code; await saveFile(rec); render(); return; }
        await sleep(Math.min(8000, 400 * Math.pow(2, tries)));
        if (!link) return;   // offline: the connection comes back and pump() resumes this file
      }
    }
    rec.state = "ready"; rec.detail = ""; rec.want = false; rec.crc = null;
    await saveFile(rec);
    blobs.set(rec.key, await store.fileBlob(rec.key, rec.mime));
    render();
    reportAcks();
    checksums();
  } finally {
    busy.delete(rec.key);
  }
}

// CRC-32 for the ZIP, computed after a file is complete (off the download's path), a slice at a time.
let summing = false;
async function checksums() {
  if (summing) return;
  summing = true;
  try {
    for (;;) {
      const rec = Array.from(files.values()).find(function (r) {
        return (r.state === "ready" || r.state === "saved") && typeof r.crc !== "number";
      });
      if (!rec) return;
      const blob = await blobOf(rec);
      let crc = 0;
      for (let off = 0; off < blob.size; off += 4 << 20) {
        crc = crc32(crc, new Uint8Array(await blob.slice(off, off + (4 << 20)).arrayBuffer()));
      }
      rec.crc = crc;
      await saveFile(rec);
      renderIncoming();
    }
  } finally { summing = false; }
}

function showProgress(rec, have) {
  const li = document.querySelector("#incoming li[data-key='" + rec.key + "']");
  if (!li) return;
  const p = li.querySelector("progress");
  if (p) p.value = have / rec.records;
  const m = li.querySelector(".meta");
  if (m) m.textContent = size(rec.size) + " · " + t("st.downloading") + " " + Math.floor((100 * have) / rec.records) + "%";
}

// What the computer has not heard yet: files held ("ready") and saves started ("saved").
let reporting = false, reportAgain = false;
async function reportAcks() {
  if (reporting) { reportAgain = true; return; }   // the running round picks up what changed meanwhile
  if (!link) return;
  reporting = true;
  try {
    do {
      reportAgain = false;
      const due = Array.from(files.values()).filter(function (r) {
        return (r.state === "ready" || r.state === "saved") && r.reported !== r.state;
      });
      for (let i = 0; i < due.length; i += 100) {
        const part = due.slice(i, i + 100);
        const items = part.map(function (r) { return { offer: r.offer, file: r.id, state: r.state }; });
        try { await link.call("/ack", { items: items }); }
        catch (e) { if (!(e instanceof proto.LinkError) || !e.status || e.status === 401) return; }
        for (let k = 0; k < part.length; k++) { part[k].reported = items[k].state; await saveFile(part[k]); }
      }
    } while (reportAgain && link);
  } finally { reporting = false; }
}

async function blobOf(rec) {
  let b = blobs.get(rec.key);
  if (!b) { b = await store.fileBlob(rec.key, rec.mime); blobs.set(rec.key, b); }
  return b;
}

function clickSave(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(function () { URL.revokeObjectURL(a.href); }, 120000);
}

async function saveOne(rec) {
  const ready = blobs.get(rec.key);
  const blob = ready || await blobOf(rec);
  const active = userActive();
  clickSave(blob, rec.name);
  if (active && rec.state === "ready") { rec.state = "saved"; await saveFile(rec); render(); reportAcks(); }
}

function readyToSave() { return Array.from(files.values()).filter(function (r) { return r.state === "ready"; }); }

async function saveAll() {
  const ready = readyToSave();
  for (const r of ready) await blobOf(r);
  const zip = makeZip(ready.map(function (r) { return { name: r.name, blob: blobs.get(r.key), size: r.size, crc: r.crc }; }));
  const active = userActive();
  const d = new Date();
  const stamp = d.getFullYear() + String(d.getMonth() + 1).padStart(2, "0") + String(d.getDate()).padStart(2, "0") +
    "-" + String(d.getHours()).padStart(2, "0") + String(d.getMinutes()).padStart(2, "0");
  clickSave(zip, "WeClaw-" + stamp + ".zip");
  if (!active) return;
  for (const r of ready) { r.state = "saved"; await saveFile(r); }
  render();
  reportAcks();
}

$("auto").checked = localStorage.getItem("weclaw.auto") === "1";
$("auto").addEventListener("change", function () {
  localStorage.setItem("weclaw.auto", auto() ? "1" : "0");
  pump();
});
$("save-all").addEventListener("click", function () { saveAll(); });

// --- sent files ----------------------------------------------------------------------------------------
function saveUpload(u) { return store.put("uploads", Object.assign({}, u, { blob: undefined })).catch(function () {}); }

async function addUploads(list) {
  const batch = [];
  for (const file of Array.from(list)) {
    const u = { id: "u" + proto.b64e(proto.rand(9)), name: file.name, size: file.size, type: file.type || "",
      lastModified: file.lastModified || 0, state: "queued", sent: 0, upload: "", key: "", at: Date.now() / 1000,
      error: "", savedAs: "" };
    heldFiles.set(u.id, file);
    uploads.set(u.id, u);
    try { await store.put("uploads", Object.assign({}, u, { blob: file })); u.stored = true; }
    catch (e) { await saveUpload(u); }
    batch.push(u);
  }
  render();
  await prepare(batch);
}

async function prepare(batch) {
  if (!batch.length) return;
  try {
    if (!link) throw new proto.LinkError(0, "network");
    const r = await link.call("/upload/prepare", { files: batch.map(function (u) {
      return { id: u.id, name: u.name, size: u.size, mime: u.type };
    }) });
    for (const u of batch) { u.upload = r.upload; u.key = r.files[u.id]; u.sent = 0; u.error = ""; await keepUpload(u); }
  } catch (e) {
    for (const u of batch) { u.state = "failed"; u.error = e instanceof proto.LinkError && e.code ? e.code : "network"; await keepUpload(u); }
    render();
    return;
  }
  for (const u of batch) await sendOne(u);
}

// Saves the record; keeps the File next to it when the browser allows (so a reload can continue).
async function keepUpload(u) {
  const file = heldFiles.get(u.id);
  if (u.stored && file) {
    try { await store.put("uploads", Object.assign({}, u, { blob: file })); return; } catch (e) { u.stored = false; }
  }
  await saveUpload(u);
}

async function fileOf(u) {
  if (heldFiles.has(u.id)) return heldFiles.get(u.id);
  const saved = await store.get("uploads", u.id);
  if (saved && saved.blob) { heldFiles.set(u.id, saved.blob); return saved.blob; }
  return null;
}

const upBusy = new Set();

async function sendOne(u) {
  if (upBusy.has(u.id)) return;
  upBusy.add(u.id);
  try {
    const file = await fileOf(u);
    if (!file) { u.state = "needsFile"; await saveUpload(u); render(); return; }
    u.state = "uploading"; u.error = ""; u.detail = "";
    render();
    const records = proto.recordCount(u.size);
    let tries = 0;
    const read = async function (i) {
      const start = i * proto.RECORD;
      return new Uint8Array(await file.slice(start, start + proto.recordLen(u.size, i)).arrayBuffer());
    };
    while (u.state === "uploading") {
      try {
        if (!link) throw new proto.LinkError(0, "network");
        const r = await link.upload(u.upload, u.id, u.key, u.size, u.sent, UP_BATCH, read);
        tries = 0; u.detail = "";
        if (r.done) { u.sent = records; u.state = "sent"; u.savedAs = r.name || ""; }
        else u.sent = r.received;
        await saveUpload(u);
        renderUploadProgress(u);
      } catch (e) {
        const code = e instanceof proto.LinkError ? e.code : "network";
        if (code === "order" && e.data && typeof e.data.received === "number") { u.sent = e.data.received; continue; }
        if (code === "finished") { u.state = "sent"; await saveUpload(u); break; }
        if (FATAL[code]) { u.state = "failed"; u.error = code; await saveUpload(u); break; }
        u.detail = "network"; renderUploadProgress(u);
        if (!link) return;   // the computer is away: the upload continues when the page reconnects
        if (++tries > 6) { u.state = "failed"; u.error = code; await saveUpload(u); break; }
        await sleep(Math.min(8000, 500 * Math.pow(2, tries)));
      }
    }
    if (u.state === "sent") { heldFiles.delete(u.id); await saveUpload(u); }
    render();
  } finally {
    upBusy.delete(u.id);
  }
}

async function retryUpload(u) {
  if (!link) return;
  if (!u.upload || u.error === "not_found" || u.error === "cancelled") { u.upload = ""; await prepare([u]); return; }
  try {
    const st = await link.call("/upload/status", { upload: u.upload });
    u.sent = st.files[u.id] ? st.files[u.id].received : 0;
  } catch (e) { u.upload = ""; await prepare([u]); return; }
  await sendOne(u);
}

async function resumeUploads() {
  for (const u of uploads.values()) {
    if (u.state === "uploading" || u.state === "queued") await retryUpload(u);
  }
}

function pickAgain(u) {
  const input = document.createElement("input");
  input.type = "file";
  input.addEventListener("change", function () {
    const file = input.files && input.files[0];
    if (!file) return;
    if (file.name !== u.name || file.size !== u.size) { u.detail = "resume"; render(); return; }
    heldFiles.set(u.id, file);
    u.state = "uploading";
    retryUpload(u);
  });
  input.click();
}

$("pick").addEventListener("change", function (e) { if (e.target.files.length) addUploads(e.target.files); e.target.value = ""; });
$("camera").addEventListener("change", function (e) { if (e.target.files.length) addUploads(e.target.files); e.target.value = ""; });

// --- rendering ----------------------------------------------------------------------------------------
function button(label, primary, fn) {
  const b = el("button", "btn small act" + (primary ? " primary" : ""), label);
  b.type = "button";
  b.addEventListener("click", fn);
  return b;
}

function render() {
  renderIncoming();
  renderOutgoing();
  renderFoot();
}

function renderIncoming() {
  const list = $("incoming");
  list.textContent = "";
  const recs = Array.from(files.values()).sort(function (a, b) { return b.at - a.at || (a.key < b.key ? -1 : 1); });
  recs.forEach(function (rec) {
    const li = el("li", "file");
    li.setAttribute("data-key", rec.key);
    li.setAttribute("data-file", rec.name);
    li.appendChild(el("div", "name", rec.name));
    let text = size(rec.size) + " · ";
    if (rec.state === "downloading") text += rec.detail ? t(rec.detail === "damaged" ? "damaged" : "network") : t("st.downloading") + " " + Math.floor((100 * rec.have) / rec.records) + "%";
    else if (rec.state === "failed") text += rec.error ? t("failedWith", { why: errorText(lang, rec.error) }) : t("st.failed");
    else text += t("st." + rec.state);
    const cls = rec.state === "saved" ? " ok" : rec.state === "failed" ? " bad" : rec.state === "ready" ? " ready" : "";
    const meta = el("div", "meta" + cls, text);
    meta.setAttribute("data-state", rec.state);
    li.appendChild(meta);
    if (rec.state === "waiting") li.appendChild(button(t("download"), true, function () { rec.want = true; pump(); }));
    else if (rec.state === "ready") li.appendChild(button(t("save"), true, function () { saveOne(rec); }));
    else if (rec.state === "saved") li.appendChild(button(t("saveAgain"), false, function () { saveOne(rec); }));
    else if (rec.state === "failed" && !FATAL[rec.error]) li.appendChild(button(t("retry"), false, function () { rec.state = "waiting"; rec.want = true; pump(); }));
    if (rec.state === "downloading") { const p = el("progress"); p.max = 1; p.value = rec.have / rec.records; li.appendChild(p); }
    list.appendChild(li);
  });
  $("incoming-empty").hidden = recs.length > 0;
  const ready = readyToSave();
  const total = ready.reduce(function (n, r) { return n + r.size + 100 + r.name.length * 2; }, 22);
  const summed = ready.every(function (r) { return typeof r.crc === "number"; });
  $("save-all-bar").hidden = ready.length < 2 || total > ZIP_LIMIT || !summed;
  $("save-all").textContent = t("saveAll", { n: ready.length });
  $("save-all-hint").textContent = t("saveAllHint");
}

function renderUploadProgress(u) {
  const li = document.querySelector("#outgoing li[data-id='" + u.id + "']");
  if (!li) { render(); return; }
  const records = proto.recordCount(u.size);
  const p = li.querySelector("progress");
  if (p) p.value = u.sent / records;
  const m = li.querySelector(".meta");
  if (m) m.textContent = size(u.size) + " · " + (u.detail ? t(u.detail) : t("st.uploading") + " " + Math.floor((100 * u.sent) / records) + "%");
}

function renderOutgoing() {
  const list = $("outgoing");
  list.textContent = "";
  const ups = Array.from(uploads.values()).sort(function (a, b) { return b.at - a.at; });
  ups.forEach(function (u) {
    const li = el("li", "file");
    li.setAttribute("data-id", u.id);
    li.setAttribute("data-file", u.name);
    li.appendChild(el("div", "name", u.name));
    const records = proto.recordCount(u.size);
    let text = size(u.size) + " · ";
    if (u.state === "uploading") text += u.detail ? t(u.detail) : t("st.uploading") + " " + Math.floor((100 * u.sent) / records) + "%";
    else if (u.state === "failed") text += t("upErr", { why: errorText(lang, u.error || "network") });
    else if (u.state === "sent") text += t("st.sent") + (u.savedAs && u.savedAs !== u.name ? " · " + t("sentTo", { name: u.savedAs }) : "");
    else text += t("st." + u.state);
    const meta = el("div", "meta" + (u.state === "sent" ? " ok" : u.state === "failed" ? " bad" : ""), text);
    meta.setAttribute("data-state", u.state);
    li.appendChild(meta);
    if (u.state === "failed" && u.error !== "too_large") li.appendChild(button(t("retry"), true, function () { u.state = "uploading"; retryUpload(u); }));
    if (u.state === "needsFile") li.appendChild(button(t("resume"), true, function () { pickAgain(u); }));
    if (u.state === "uploading") { const p = el("progress"); p.max = 1; p.value = u.sent / records; li.appendChild(p); }
    list.appendChild(li);
  });
  $("outgoing-empty").hidden = ups.length > 0;
}

function renderFoot() {
  const f = $("foot");
  f.textContent = "";
  if (!store.persistent()) f.appendChild(el("div", "warn", t("noStorage")));
  if (!creds) return;
  const name = (me && me.name) || creds.name || "";
  const desktop = (me && me.desktop) || creds.desktop || "";
  if (confirmUnpair) {
    f.appendChild(el("span", "", t("forgetAsk", { desktop: desktop }) + " "));
    f.appendChild(button(t("forget"), true, function () { confirmUnpair = false; unpairHere(); }));
    f.appendChild(button("✕", false, function () { confirmUnpair = false; renderFoot(); }));
    return;
  }
  f.appendChild(el("span", "", t("pairedAs", { name: name, desktop: desktop }) + " · "));
  const a = el("a", "", t("forget"));
  a.href = "#";
  a.id = "unpair";
  a.addEventListener("click", function (e) { e.preventDefault(); confirmUnpair = true; renderFoot(); });
  f.appendChild(a);
}

// --- start --------------------------------------------------------------------------------------------
async function start() {
  applyLang();
  await store.open();
  phoneId = await store.get("meta", "phone");
  if (!phoneId) { phoneId = proto.b64e(proto.rand(16)); await store.put("meta", phoneId, "phone"); }
  creds = (await store.get("meta", "creds")) || null;
  (await store.all("files")).forEach(function (r) { files.set(r.key, r); });
  (await store.all("uploads")).forEach(function (u) { u.stored = !!u.blob; delete u.blob; uploads.set(u.id, u); });
  for (const u of uploads.values()) if (u.state === "uploading" && !u.stored && !heldFiles.has(u.id)) u.state = "needsFile";
  render();
  checksums();
  sendPendingUnpair();
  const secret = proto.secretFromHash(location.hash);
  if (secret) {
    history.replaceState(null, "", location.pathname);   // the secret leaves the address bar at once
    await pairWith(secret);
  } else if (creds) {
    showPaired(true);
    await connect();
  } else {
    showPaired(false);
    setStatus("unpaired");
  }
}
// A new QR code scanned while this page is open only changes the #fragment: pair again.
window.addEventListener("hashchange", function () {
  const secret = proto.secretFromHash(location.hash);
  if (!secret) return;
  history.replaceState(null, "", location.pathname);
  if (evAbort) { evAbort.abort(); evAbort = null; }
  link = null;
  pairWith(secret);
});

window.weclaw = {
  state: function () {
    return { paired: !!creds, status: statusKey, persistent: store.persistent(),
             files: Array.from(files.values()).map(function (r) { return Object.assign({}, r); }),
             uploads: Array.from(uploads.values()).map(function (u) { return Object.assign({}, u); }) };
  },
  proto: proto,
  crc32: crc32,
  makeZip: makeZip,
  ready: start(),
};
