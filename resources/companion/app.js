/* WeClaw phone page: pair with the desktop, receive files (verified with SHA-256), send files.
 * Plain HTTP on the LAN is not a secure context: no service worker, no crypto.subtle, no clipboard.
 * Everything here works without them. No framework, no build step. */
(function () {
  "use strict";

  var API = "/api/v1";
  var CHUNK = 4 * 1024 * 1024;             // download and hashing slice
  var VERIFY_LIMIT = 1024 * 1024 * 1024;   // larger files are saved by the browser itself, unverified
  var STALE_MS = 40000;                    // the server pings every 15 s
  var store = window.localStorage;

  var T = {
    en: {
      title: "WeClaw", pairTitle: "Connect to your computer",
      step1: "On the computer, open WeClaw and press the Phone button.",
      step2: "Scan the QR code with this phone's camera and open the link.",
      step3: "Confirm the new phone on the computer.",
      sameWifi: "The phone and the computer must be on the same Wi-Fi.",
      receiveTitle: "From your computer", autoDownload: "Auto-download",
      noIncoming: "Nothing yet. Files the assistant sends to this phone appear here.",
      sendTitle: "Send to your computer", pickFiles: "Choose files", takePhoto: "Take a photo",
      online: "Connected", connecting: "Connecting…", offline: "Offline, retrying…", unpaired: "Not paired",
      pairing: "Pairing… confirm on your computer", download: "Download", again: "Save again", retry: "Retry",
      waiting: "Ready", downloading: "Downloading", verifying: "Checking", delivered: "Saved · verified ✓",
      savedBrowser: "Saved by the browser (too large to verify here)", failed: "Failed",
      mismatch: "Damaged in transit (SHA-256 differs)", cancelled: "Cancelled", hashing: "Checking",
      uploading: "Sending", sent: "Sent · verified ✓", queued: "Waiting",
      revoked: "This phone was removed on the computer. Scan a new QR code to pair again.",
      expired: "The pairing has expired. Scan a new QR code to pair again.",
      invalid: "This QR code was already used or has expired. Show a new one on the computer.",
      declined: "The computer did not accept this phone.",
      timeout: "Nobody confirmed on the computer in time. Scan the QR code again.",
      rate_limited: "Too many attempts. Wait a minute and try again.",
      no_space: "The computer does not have enough free space.", too_large: "The file is too large.",
      pairedAs: "Paired as {name} with {desktop}", forget: "Unpair",
      network: "Network problem, retrying…", upErr: "Could not send"
    },
    zh: {
      title: "WeClaw", pairTitle: "连接到电脑",
      step1: "在电脑上打开 WeClaw，点击“手机”按钮。",
      step2: "用这台手机的相机扫描二维码，并打开链接。",
      step3: "在电脑上确认这台新手机。",
      sameWifi: "手机和电脑需要连接同一个 Wi-Fi。",
      receiveTitle: "来自电脑", autoDownload: "自动下载",
      noIncoming: "暂时没有文件。助手发到这台手机的文件会显示在这里。",
      sendTitle: "发送到电脑", pickFiles: "选择文件", takePhoto: "拍照",
      online: "已连接", connecting: "正在连接…", offline: "已断开，正在重试…", unpaired: "未配对",
      pairing: "正在配对…请在电脑上确认", download: "下载", again: "再次保存", retry: "重试",
      waiting: "可下载", downloading: "正在下载", verifying: "正在校验", delivered: "已保存 · 校验通过 ✓",
      savedBrowser: "已交给浏览器保存（文件太大，无法在此校验）", failed: "失败",
      mismatch: "传输中损坏（SHA-256 不一致）", cancelled: "已取消", hashing: "正在校验",
      uploading: "正在发送", sent: "已发送 · 校验通过 ✓", queued: "等待中",
      revoked: "这台手机已在电脑上被移除。请重新扫描二维码配对。",
      expired: "配对已过期。请重新扫描二维码配对。",
      invalid: "这个二维码已用过或已过期。请在电脑上重新生成。",
      declined: "电脑没有接受这台手机。",
      timeout: "电脑上无人确认。请重新扫描二维码。",
      rate_limited: "尝试次数过多，请一分钟后再试。",
      no_space: "电脑的可用空间不足。", too_large: "文件太大。",
      pairedAs: "已作为“{name}”连接到 {desktop}", forget: "取消配对",
      network: "网络异常，正在重试…", upErr: "发送失败"
    }
  };

  var lang = store.getItem("weclaw.lang") || ((navigator.language || "en").toLowerCase().indexOf("zh") === 0 ? "zh" : "en");
  var token = store.getItem("weclaw.token") || "";
  var me = null;                 // {device, desktop}
  var offers = {};               // session -> {files: [...]} from the server
  var local = {};                // "session/file" -> {state, progress, detail}
  var es = null, lastBeat = 0, connecting = false, backoff = 1000, connTimer = null;
  var statusKey = "connecting";

  function $(id) { return document.getElementById(id); }
  function t(key, vars) {
    var s = (T[lang] && T[lang][key]) || T.en[key] || key;
    if (vars) Object.keys(vars).forEach(function (k) { s = s.replace("{" + k + "}", vars[k]); });
    return s;
  }
  function size(n) {
    var u = ["B", "KB", "MB", "GB", "TB"], i = 0;
    while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)) + " " + u[i];
  }
  function sleep(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // --- language ----------------------------------------------------------------------------------
  function applyLang() {
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
    $("lang").textContent = lang === "zh" ? "EN" : "中文";
    var nodes = document.querySelectorAll("[data-i18n]");
    for (var i = 0; i < nodes.length; i++) nodes[i].textContent = t(nodes[i].getAttribute("data-i18n"));
    setStatus(statusKey);
    renderFoot();
    renderIncoming();
    renderOutgoing();
  }
  $("lang").addEventListener("click", function () {
    lang = lang === "zh" ? "en" : "zh";
    store.setItem("weclaw.lang", lang);
    applyLang();
  });

  function setStatus(key) {
    statusKey = key;
    $("status").className = "status " + (key === "online" ? "online" : key === "offline" || key === "unpaired" ? "offline" : "connecting");
    $("status-text").textContent = t(key);
  }
  function notice(text, bad) {
    $("notice").hidden = !text;
    $("notice").className = "card notice" + (bad ? " bad" : "");
    $("notice-text").textContent = text || "";
  }
  function showPaired(paired) {
    $("pair-card").hidden = paired;
    $("receive-card").hidden = !paired;
    $("send-card").hidden = !paired;
  }
  function renderFoot() {
    var f = $("foot");
    f.textContent = "";
    if (!me) return;
    f.appendChild(el("span", "", t("pairedAs", { name: me.device.name, desktop: me.desktop }) + " · "));
    var a = el("a", "", t("forget"));
    a.href = "#";
    a.addEventListener("click", function (e) { e.preventDefault(); unpaired(""); });
    f.appendChild(a);
  }

  // --- HTTP --------------------------------------------------------------------------------------
  function request(method, path, body) {
    return new Promise(function (resolve, reject) {
      var x = new XMLHttpRequest();
      x.open(method, API + path);
      if (token) x.setRequestHeader("Authorization", "Bearer " + token);
      if (body !== undefined) x.setRequestHeader("Content-Type", "application/json");
      x.onload = function () {
        var data = null;
        try { data = JSON.parse(x.responseText); } catch (e) { data = null; }
        resolve({ status: x.status, data: data || {} });
      };
      x.onerror = function () { reject(new Error("network")); };
      x.send(body === undefined ? null : JSON.stringify(body));
    });
  }

  function deviceName() {
    var ua = navigator.userAgent || "";
    var m = ua.match(/Android [\d.]+; ([^;)]+?)(?: Build|\))/);
    if (m && m[1] && m[1] !== "K") return m[1].trim();
    if (/iPhone/.test(ua)) return "iPhone";
    if (/iPad/.test(ua)) return "iPad";
    if (/Android/.test(ua)) return "Android";
    return lang === "zh" ? "手机" : "Phone";
  }

  function pair(code) {
    setStatus("connecting");
    showPaired(false);
    notice(t("pairing"), false);
    return request("POST", "/pair", { token: code, name: deviceName() }).then(function (r) {
      if (r.status === 200 && r.data.token) {
        token = r.data.token;
        store.setItem("weclaw.token", token);
        notice("");
        return connect();
      }
      setStatus("unpaired");
      $("pair-card").hidden = false;
      notice(t(r.data.code) !== r.data.code ? t(r.data.code) : (r.data.error || t("failed")), true);
    }, function () {
      setStatus("offline");
      notice(t("network"), true);
    });
  }

  function unpaired(code) {
    token = "";
    me = null;
    store.removeItem("weclaw.token");
    if (es) { es.close(); es = null; }
    offers = {};
    showPaired(false);
    setStatus("unpaired");
    notice(code ? t(code) : "", true);
    renderFoot();
  }

  // --- live connection ---------------------------------------------------------------------------
  function connect() {
    if (!token || connecting) return Promise.resolve();
    connecting = true;
    clearTimeout(connTimer);
    setStatus("connecting");
    return request("GET", "/me").then(function (r) {
      connecting = false;
      if (r.status === 401) return unpaired(r.data.code === "expired" ? "expired" : "revoked");
      if (r.status !== 200) throw new Error("status " + r.status);
      me = r.data;
      showPaired(true);
      renderFoot();
      openEvents();
    }).catch(function () {
      connecting = false;
      setStatus("offline");
      connTimer = setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, 15000);
    });
  }

  function openEvents() {
    if (es) es.close();
    es = new EventSource(API + "/events");   // the device cookie set by /me authenticates it
    lastBeat = Date.now();
    es.onopen = function () { lastBeat = Date.now(); backoff = 1000; setStatus("online"); };
    es.onerror = function () {
      if (!es) return;
      if (es.readyState === 2) { es.close(); es = null; connTimer = setTimeout(connect, backoff); }
      setStatus("offline");
    };
    function on(kind, fn) {
      es.addEventListener(kind, function (e) {
        lastBeat = Date.now();
        setStatus("online");
        fn(e.data ? JSON.parse(e.data) : {});
      });
    }
    on("ping", function () {});
    on("hello", function (d) {
      offers = {};
      d.offers.forEach(addOffer);
      renderIncoming();
    });
    on("offer", function (d) { addOffer(d); renderIncoming(); });
    on("cancel", function (d) {
      var o = offers[d.session];
      if (o) o.files.forEach(function (f) {
        var s = local[key(d.session, f.id)];
        if (s && !s.busy && s.state !== "delivered") s.state = "cancelled";
      });
      renderIncoming();
    });
    on("state", function (d) {
      var s = local[key(d.session, d.file)];
      if (s && d.state === "delivered") s.state = "delivered";
      if (s && d.state === "failed" && s.state !== "delivered") s.state = "failed";
      renderIncoming();
    });
    on("revoked", function () { unpaired("revoked"); });
  }

  // Phones freeze pages in the background: check the stream when the page comes back or goes quiet.
  function watchdog() {
    if (!token) return;
    if (!es && !connecting) { connect(); return; }
    if (es && Date.now() - lastBeat > STALE_MS) { es.close(); es = null; setStatus("offline"); connect(); }
  }
  setInterval(watchdog, 5000);
  document.addEventListener("visibilitychange", function () { if (!document.hidden) watchdog(); });
  window.addEventListener("online", function () { backoff = 1000; watchdog(); });
  window.addEventListener("pageshow", watchdog);

  // --- receiving ---------------------------------------------------------------------------------
  function key(session, file) { return session + "/" + file; }

  function addOffer(o) {
    offers[o.session] = o;
    o.files.forEach(function (f) {
      var k = key(o.session, f.id);
      if (!local[k]) local[k] = { state: f.state === "delivered" ? "delivered" : "waiting", progress: 0 };
      if (!local[k].busy && $("auto").checked && local[k].state === "waiting") receive(o, f);
    });
  }

  function renderIncoming() {
    var list = $("incoming");
    list.textContent = "";
    var sessions = Object.keys(offers).sort(function (a, b) { return offers[b].created_at - offers[a].created_at; });
    var count = 0;
    sessions.forEach(function (sid) {
      offers[sid].files.forEach(function (f) {
        count++;
        var s = local[key(sid, f.id)] || { state: "waiting", progress: 0 };
        var li = el("li", "file");
        li.setAttribute("data-key", key(sid, f.id));
        li.setAttribute("data-file", f.name);
        li.appendChild(el("div", "name", f.name));
        var text = size(f.size) + " · ";
        if (s.state === "downloading" || s.state === "verifying") text += t(s.state) + " " + Math.floor(s.progress * 100) + "%";
        else text += s.detail ? s.detail : t(s.state);
        var cls = s.state === "delivered" || s.state === "savedBrowser" ? " ok" : s.state === "failed" || s.state === "mismatch" ? " bad" : "";
        var meta = el("div", "meta" + cls, text);
        meta.setAttribute("data-state", s.state);
        li.appendChild(meta);
        if (!s.busy && s.state !== "cancelled") {
          var b = el("button", "btn small act" + (s.state === "waiting" ? " primary" : ""),
            t(s.state === "waiting" ? "download" : s.state === "failed" || s.state === "mismatch" ? "retry" : "again"));
          b.type = "button";
          b.addEventListener("click", function () { receive(offers[sid], f); });
          li.appendChild(b);
        }
        if (s.busy) { var p = el("progress"); p.max = 1; p.value = s.progress; li.appendChild(p); }
        list.appendChild(li);
      });
    });
    $("incoming-empty").hidden = count > 0;
  }

  function fileUrl(o, f) {
    return API + "/download?session=" + encodeURIComponent(o.session) + "&file=" + encodeURIComponent(f.id) +
      "&token=" + encodeURIComponent(f.token);
  }

  function getRange(url, start, end, onProgress) {
    return new Promise(function (resolve, reject) {
      var x = new XMLHttpRequest();
      x.open("GET", url);
      x.responseType = "arraybuffer";
      x.setRequestHeader("Authorization", "Bearer " + token);
      x.setRequestHeader("Range", "bytes=" + start + "-" + end);
      x.setRequestHeader("X-WeClaw-Verify", "1");
      x.onprogress = function (e) { onProgress(e.loaded); };
      x.onload = function () {
        if (x.status === 206 || (x.status === 200 && start === 0)) resolve(x.response);
        else { var err = new Error("http " + x.status); err.status = x.status; reject(err); }
      };
      x.onerror = function () { reject(new Error("network")); };
      x.send();
    });
  }

  function saveBlob(blob, name) {
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(a.href); }, 60000);
  }

  function receive(o, f) {
    var s = local[key(o.session, f.id)];
    if (s.busy) return;
    if (f.size > VERIFY_LIMIT) {       // let the browser's own download manager stream it to disk
      var a = document.createElement("a");
      a.href = fileUrl(o, f);
      a.download = f.name;
      document.body.appendChild(a); a.click(); a.remove();
      s.state = "savedBrowser";
      renderIncoming();
      return;
    }
    s.busy = true; s.state = "downloading"; s.progress = 0; s.detail = "";
    renderIncoming();
    var hasher = new Sha256(), parts = [], offset = 0, tries = 0, url = fileUrl(o, f);
    function step() {
      if (offset >= f.size) return Promise.resolve();
      var end = Math.min(f.size, offset + CHUNK) - 1;
      return getRange(url, offset, end, function (n) {
        s.progress = (offset + n) / f.size; renderProgress(o, f, s);
      }).then(function (buf) {
        if (buf.byteLength !== end - offset + 1) throw new Error("short read");
        hasher.update(new Uint8Array(buf));
        parts.push(new Blob([buf]));  // the browser may keep finished parts on disk
        offset = end + 1; tries = 0;
        return step();
      }, function (err) {
        if (err.status === 401) { unpaired("revoked"); throw err; }
        if (err.status === 403 || err.status === 404 || err.status === 410) throw err;
        tries++;
        if (tries > 8) throw err;
        s.detail = t("network");
        return sleep(Math.min(15000, 500 * Math.pow(2, tries))).then(step);  // resume at offset with Range
      });
    }
    step().then(function () {
      var digest = hasher.hex();
      if (digest === f.sha256) saveBlob(new Blob(parts, { type: f.mime }), f.name);
      return request("POST", "/ack", { session: o.session, file: f.id, token: f.token, sha256: digest }).then(function (r) {
        s.state = r.data.state === "delivered" ? "delivered" : digest !== f.sha256 ? "mismatch" : "failed";
      });
    }).catch(function (err) {
      s.state = err.status === 410 ? "cancelled" : "failed";
    }).then(function () {
      s.busy = false; s.detail = ""; parts = null;
      renderIncoming();
    });
  }

  function renderProgress(o, f, s) {
    var items = $("incoming").querySelectorAll(".file");
    for (var i = 0; i < items.length; i++) {
      if (items[i].getAttribute("data-key") !== key(o.session, f.id)) continue;
      var p = items[i].querySelector("progress");
      if (p) p.value = s.progress;
      var m = items[i].querySelector(".meta");
      m.textContent = size(f.size) + " · " + (s.detail || t("downloading") + " " + Math.floor(s.progress * 100) + "%");
    }
  }

  $("auto").checked = store.getItem("weclaw.auto") === "1";
  $("auto").addEventListener("change", function () {
    store.setItem("weclaw.auto", $("auto").checked ? "1" : "0");
    if ($("auto").checked) Object.keys(offers).forEach(function (sid) { addOffer(offers[sid]); });
    renderIncoming();
  });

  // --- sending -----------------------------------------------------------------------------------
  var uploads = [];   // {id, file, state, progress, detail}
  var upSeq = 0;

  function renderOutgoing() {
    var list = $("outgoing");
    list.textContent = "";
    uploads.slice().reverse().forEach(function (u) {
      var li = el("li", "file");
      li.appendChild(el("div", "name", u.file.name));
      var text = size(u.file.size) + " · ";
      if (u.state === "hashing" || u.state === "uploading") text += t(u.state) + " " + Math.floor(u.progress * 100) + "%";
      else text += u.detail || t(u.state);
      var meta = el("div", "meta" + (u.state === "sent" ? " ok" : u.state === "failed" ? " bad" : ""), text);
      meta.setAttribute("data-state", u.state);
      li.appendChild(meta);
      if (u.state === "hashing" || u.state === "uploading") { var p = el("progress"); p.max = 1; p.value = u.progress; li.appendChild(p); }
      list.appendChild(li);
    });
  }

  function readSlice(file, start, end) {
    var blob = file.slice(start, end);
    if (blob.arrayBuffer) return blob.arrayBuffer();
    return new Promise(function (resolve, reject) {
      var r = new FileReader();
      r.onload = function () { resolve(r.result); };
      r.onerror = function () { reject(r.error); };
      r.readAsArrayBuffer(blob);
    });
  }

  function hashFile(u) {
    var h = new Sha256(), off = 0, f = u.file;
    function next() {
      if (off >= f.size) return Promise.resolve(h.hex());
      var end = Math.min(f.size, off + CHUNK);
      return readSlice(f, off, end).then(function (buf) {
        h.update(new Uint8Array(buf));
        off = end; u.progress = off / f.size; renderOutgoing();
        return next();
      });
    }
    return next();
  }

  function put(u, session, fileToken) {
    return new Promise(function (resolve, reject) {
      var x = new XMLHttpRequest();
      x.open("POST", API + "/upload?session=" + encodeURIComponent(session) + "&file=" + encodeURIComponent(u.id) +
        "&token=" + encodeURIComponent(fileToken));
      x.setRequestHeader("Authorization", "Bearer " + token);
      x.setRequestHeader("Content-Type", "application/octet-stream");
      x.upload.onprogress = function (e) { if (e.lengthComputable) { u.progress = e.loaded / e.total; renderOutgoing(); } };
      x.onload = function () {
        var d = {};
        try { d = JSON.parse(x.responseText); } catch (e) { d = {}; }
        if (x.status === 200) resolve(d);
        else { var err = new Error(d.error || "http " + x.status); err.status = x.status; err.code = d.code; reject(err); }
      };
      x.onerror = function () { reject(new Error("network")); };
      x.send(u.file);   // streamed from the phone's storage by the browser
    });
  }

  function send(fileList) {
    var batch = Array.prototype.slice.call(fileList).map(function (file) {
      var u = { id: "f" + (++upSeq), file: file, state: "queued", progress: 0, detail: "" };
      uploads.push(u);
      return u;
    });
    renderOutgoing();
    var chain = Promise.resolve();
    batch.forEach(function (u) {
      chain = chain.then(function () { u.state = "hashing"; return hashFile(u); }).then(function (digest) { u.sha256 = digest; });
    });
    return chain.then(function () {
      batch.forEach(function (u) { u.state = "queued"; u.progress = 0; });
      renderOutgoing();
      return request("POST", "/upload/prepare", { files: batch.map(function (u) {
        return { id: u.id, name: u.file.name, size: u.file.size, sha256: u.sha256, mime: u.file.type || "" };
      }) });
    }).then(function (r) {
      if (r.status === 401) { unpaired(r.data.code === "expired" ? "expired" : "revoked"); throw new Error("unpaired"); }
      if (r.status !== 200) { var e = new Error(r.data.error); e.code = r.data.code; throw e; }
      var seq = Promise.resolve();
      batch.forEach(function (u) {
        seq = seq.then(function () { return upload(u, r.data.session, r.data.files[u.id], 0); });
      });
      return seq;
    }).catch(function (err) {
      batch.forEach(function (u) {
        if (u.state !== "sent") { u.state = "failed"; u.detail = t("upErr") + ": " + (err.code && T.en[err.code] ? t(err.code) : err.message); }
      });
      renderOutgoing();
    });
  }

  function upload(u, session, fileToken, attempt) {
    u.state = "uploading"; u.progress = 0; renderOutgoing();
    return put(u, session, fileToken).then(function (d) {
      u.state = d.sha256 === u.sha256 ? "sent" : "failed";
      if (u.state === "failed") u.detail = t("mismatch");
      renderOutgoing();
    }, function (err) {
      if (!err.status && attempt < 3) { u.detail = t("network"); return sleep(2000 * (attempt + 1)).then(function () { return upload(u, session, fileToken, attempt + 1); }); }
      u.state = "failed";
      u.detail = err.code === "sha_mismatch" ? t("mismatch") : t("upErr") + ": " + err.message;
      renderOutgoing();
    });
  }

  $("pick").addEventListener("change", function (e) { if (e.target.files.length) send(e.target.files); e.target.value = ""; });
  $("camera").addEventListener("change", function (e) { if (e.target.files.length) send(e.target.files); e.target.value = ""; });

  // --- start -------------------------------------------------------------------------------------
  applyLang();
  function codeFromHash() {
    var m = location.hash.match(/[#&]t=([A-Za-z0-9_-]+)/);
    if (!m) return false;
    history.replaceState(null, "", location.pathname);   // the one-time code leaves the address bar
    if (es) { es.close(); es = null; }
    pair(m[1]);
    return true;
  }
  // A new QR code scanned while this page is open only changes the #fragment: pair again.
  window.addEventListener("hashchange", codeFromHash);
  if (codeFromHash()) {
    // pairing
  } else if (token) {
    connect();
  } else {
    showPaired(false);
    setStatus("unpaired");
  }
  window.weclaw = { state: function () { return { token: !!token, status: statusKey, offers: offers, local: local, uploads: uploads }; } };
})();
