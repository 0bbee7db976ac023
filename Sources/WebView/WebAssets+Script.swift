extension WebAssets {
    static let script = Array(javascript.utf8)

    /// The page's behaviour: the event stream feeds the sensor cards and their canvas plots;
    /// the gateway's status, the sessions and the medals are read from the JSON routes.
    private static let javascript = #"""
"use strict";
const WINDOW_MS = 10000;
// Points come every two seconds; drawn this far behind the gateway's clock, the newest of them
// is always on the canvas and the traces scroll smoothly between events.
const DISPLAY_DELAY_MS = 2500;
const token = new URLSearchParams(location.search).get("token");
const withToken = (path) => token ? path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token) : path;
const traces = new Map();   // address -> [[ms, x, y, z, gap], ...]
const cards = new Map();    // address -> elements
const rates = new Map();    // address -> {received, at, perSecond}
let offsetMs = 0;           // gateway clock minus this browser's clock
let statusSensors = new Map();
let userIds = [];

function el(tag, cls, text) { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
function bytes(n) { if (n == null) return "–"; const u = ["B", "KB", "MB", "GB", "TB"]; let i = 0; while (n >= 1024 && i < 4) { n /= 1024; i++; } return (i ? n.toFixed(1) : n) + " " + u[i]; }
function minutes(seconds) { return seconds >= 3600 ? (seconds / 3600).toFixed(1) + " h" : Math.round(seconds / 60) + " min"; }
async function getJSON(path) { const r = await fetch(withToken(path), { cache: "no-store" }); if (!r.ok) throw new Error(path + ": " + r.status); return r.json(); }

function card(sensor) {
  let c = cards.get(sensor.address);
  if (c) return c;
  const grid = document.getElementById("sensors");
  if (cards.size === 0) grid.textContent = "";
  const root = el("div", "card sensor"); root.dataset.address = sensor.address;
  const top = el("div", "top"), title = el("div");
  const name = el("div", "name"), addr = el("div", "addr", sensor.address), state = el("span", "state");
  title.append(name, addr); top.append(title, state);
  const stats = el("div", "stats");
  const canvas = el("canvas", "trace");
  const legend = el("div", "legend");
  legend.innerHTML = 'gyro °/s, last 10 s<i style="background:var(--x)"></i>x<i style="background:var(--y)"></i>y<i style="background:var(--z)"></i>z';
  root.append(top, stats, canvas, legend);
  grid.append(root);
  c = { root, name, state, stats, canvas };
  cards.set(sensor.address, c);
  return c;
}

function stat(label, value) { const s = el("span"); s.append(label + " "); s.append(el("b", null, value)); return s; }

function showSensors(data) {
  offsetMs = data.nowMs - Date.now();
  for (const s of data.sensors) {
    const c = card(s);
    c.name.textContent = s.name || s.userId;
    c.state.textContent = s.state; c.state.className = "state " + s.state; c.root.dataset.state = s.state;
    // The gateway's clock, not the browser's: events may arrive bunched.
    const r = rates.get(s.address);
    let perSecond = r ? r.perSecond : null;
    if (r && data.nowMs > r.at) perSecond = Math.max(0, (s.samplesReceived - r.received) * 1000 / (data.nowMs - r.at));
    rates.set(s.address, { received: s.samplesReceived, at: data.nowMs, perSecond });
    const session = statusSensors.get(s.address);
    const parts = [
      stat("battery", s.batteryPercent == null ? "–" : s.batteryPercent + " %"),
      stat("samples/s", (perSecond == null ? "…" : perSecond.toFixed(0)) + " / " + s.odrHz),
      stat("session gaps", session ? String(session.gaps) + (session.missing ? " (" + session.missing + " missing)" : "") : "no session"),
      stat("backfilled", s.backfill ? String(s.backfilledSamples) : "off"),
    ];
    if (s.state !== "streaming" && s.lastSampleMs) parts.push(stat("last sample", Math.round((data.nowMs - s.lastSampleMs) / 1000) + " s ago"));
    if (s.lastError && s.state !== "streaming") parts.push(stat("last error", s.lastError));
    if (s.fleet) parts.push(stat("fleet", s.fleet));
    c.stats.replaceChildren(...parts);
  }
}

function addPoints(data) {
  for (const [address, points] of Object.entries(data)) {
    let list = traces.get(address);
    if (!list) { list = []; traces.set(address, list); }
    for (const p of points) list.push(p);
    const oldest = Date.now() + offsetMs - DISPLAY_DELAY_MS - WINDOW_MS - 2000;
    let drop = 0; while (drop < list.length && list[drop][0] < oldest) drop++;
    if (drop) list.splice(0, drop);
  }
}

function fit(canvas) {
  const ratio = window.devicePixelRatio || 1, w = Math.round(canvas.clientWidth * ratio), h = Math.round(canvas.clientHeight * ratio);
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
  const g = canvas.getContext("2d"); g.setTransform(ratio, 0, 0, ratio, 0, 0);
  return [g, canvas.clientWidth, canvas.clientHeight];
}

function drawTrace(address, c) {
  const [g, w, h] = fit(c.canvas);
  g.clearRect(0, 0, w, h);
  const end = Date.now() + offsetMs - DISPLAY_DELAY_MS, start = end - WINDOW_MS;
  const list = (traces.get(address) || []).filter((p) => p[0] >= start);
  let peak = 10;
  for (const p of list) peak = Math.max(peak, Math.abs(p[1]), Math.abs(p[2]), Math.abs(p[3]));
  const x = (t) => (t - start) / WINDOW_MS * w, y = (v) => h / 2 - v / peak * (h / 2 - 4);
  g.strokeStyle = "#e5e7eb"; g.lineWidth = 1; g.beginPath(); g.moveTo(0, h / 2); g.lineTo(w, h / 2);
  for (let s = 0; s <= 10; s += 2) { const px = x(end - s * 1000); g.moveTo(px, 0); g.lineTo(px, h); }
  g.stroke();
  g.fillStyle = "#9ca3af"; g.font = "10px system-ui"; g.fillText("±" + Math.round(peak), 4, 11);
  // Points further apart than this are not joined: the trace shows the gap.
  const joinMs = 400;
  ["--x", "--y", "--z"].forEach((color, axis) => {
    g.strokeStyle = getComputedStyle(document.body).getPropertyValue(color); g.lineWidth = 1.5; g.beginPath();
    let previous = null;
    for (const p of list) {
      if (previous === null || p[4] || p[0] - previous > joinMs) g.moveTo(x(p[0]), y(p[axis + 1])); else g.lineTo(x(p[0]), y(p[axis + 1]));
      previous = p[0];
    }
    g.stroke();
  });
  const newest = list.length ? list[list.length - 1][0] : null;
  const stale = newest === null || end - newest > 3000;
  c.root.dataset.live = stale ? "no" : "yes";
  c.root.dataset.points = String(list.length);
}

function frame() { for (const [address, c] of cards) drawTrace(address, c); requestAnimationFrame(frame); }

function connect() {
  const conn = document.getElementById("conn");
  const source = new EventSource(withToken("events"));
  source.addEventListener("open", () => { conn.textContent = "live"; });
  source.addEventListener("error", () => { conn.textContent = "reconnecting…"; });
  source.addEventListener("sensors", (e) => showSensors(JSON.parse(e.data)));
  source.addEventListener("points", (e) => addPoints(JSON.parse(e.data)));
}

async function refreshStatus() {
  try {
    const s = await getJSON("api/status");
    document.getElementById("gateway").textContent = s.gatewayId;
    const broker = document.getElementById("broker"); broker.textContent = s.broker.state; broker.title = s.broker.detail || "";
    document.getElementById("outbox").textContent = s.outbox.depth + " waiting" + (s.outbox.parked ? ", " + s.outbox.parked + " parked" : "");
    document.getElementById("store").textContent = bytes(s.store.usedBytes) + " of " + bytes(s.store.maxBytes) + (s.store.state === "full" ? " (full)" : "");
    const st = s.store, writes = [];
    if (st.writtenBytes != null) writes.push(bytes(st.writtenBytes) + " written");
    if (st.writtenBytesPerDay != null) writes.push(bytes(st.writtenBytesPerDay) + "/day");
    document.getElementById("writes").textContent = writes.length ? writes.join(", ") : s.capture.commits + " commits";
    const clock = document.getElementById("clock"), c = s.clock || {};
    clock.textContent = c.state === "board" ? "board time (" + (c.boardSource || "?") + ")" : (c.state || "?");
    clock.title = c.fix || (c.lastRedating ? "last re-dated " + c.lastRedating.deltaSeconds + " s: " + c.lastRedating.reason : "");
    clock.style.color = c.state === "synchronised" ? "" : "var(--warn)";
    statusSensors = new Map();
    const users = new Set();
    for (const sensor of s.sensors) {
      if (sensor.userId) users.add(sensor.userId);
      if (sensor.session) { statusSensors.set(sensor.address, sensor.session); users.add(sensor.session.userId); }
    }
    userIds = [...users].sort();
  } catch (e) { document.getElementById("broker").textContent = "?"; }
}

function drawBars(canvas, days) {
  const [g, w, h] = fit(canvas);
  g.clearRect(0, 0, w, h);
  const peak = Math.max(60, ...days.map((d) => d.seconds));
  const slot = w / Math.max(1, days.length), bar = Math.max(2, Math.min(28, slot * 0.7));
  g.font = "10px system-ui"; g.textAlign = "center";
  days.forEach((d, i) => {
    const cx = slot * i + slot / 2, bh = d.seconds / peak * (h - 30);
    g.fillStyle = d.count ? "#1c7ed6" : "#e5e7eb"; g.fillRect(cx - bar / 2, h - 16 - Math.max(bh, 1), bar, Math.max(bh, 1));
    g.fillStyle = "#374151"; if (d.count) g.fillText(String(d.count), cx, h - 19 - bh);
    g.fillStyle = "#9ca3af"; if (days.length <= 8 || i % 5 === 0 || i === days.length - 1) g.fillText(d.label, cx, h - 3);
  });
}

function dayList(range, report) {
  const days = [];
  if (range === "today") {
    return report.sessions.map((s) => ({ label: new Date(s.startMs).toTimeString().slice(0, 5), seconds: s.durationSeconds, count: 1 }));
  }
  const byDate = new Map();
  for (const s of report.sessions) { const d = byDate.get(s.date) || { seconds: 0, count: 0 }; d.seconds += s.durationSeconds; d.count += 1; byDate.set(s.date, d); }
  const n = Math.round((report.toMs - report.fromMs) / 86400000);
  for (let i = 0; i < n; i++) {
    const day = new Date(report.fromMs + i * 86400000 + 43200000);
    const date = day.getFullYear() + "-" + String(day.getMonth() + 1).padStart(2, "0") + "-" + String(day.getDate()).padStart(2, "0");
    const d = byDate.get(date) || { seconds: 0, count: 0 };
    days.push({ label: range === "week" ? day.toDateString().slice(0, 3) : String(day.getDate()), seconds: d.seconds, count: d.count });
  }
  return days;
}

// A download link per session of the month, newest first: the admin API's export, streamed.
function showExports(sessions) {
  if (!sessions.length) return;
  const rows = sessions.slice().reverse().slice(0, 50).map((s) => {
    const row = el("div"); row.dataset.session = s.id;
    row.append(el("code", null, s.id), el("span", null, s.device + " · " + s.samples + " samples"));
    for (const [format, label] of [["csv", "CSV"], ["influx", "line protocol"]]) {
      const a = el("a", "export " + format, label);
      a.href = withToken("api/export?session=" + encodeURIComponent(s.id) + "&format=" + format);
      a.setAttribute("download", ""); row.append(a);
    }
    return row;
  });
  document.getElementById("exports").replaceChildren(...rows);
}

async function refreshSessions() {
  for (const chart of document.querySelectorAll(".chart")) {
    const range = chart.dataset.range;
    try {
      const report = await getJSON("api/sessions?range=" + range);
      chart.dataset.count = String(report.count); chart.dataset.duration = String(report.durationSeconds);
      chart.querySelector(".total").textContent = report.count + (report.count === 1 ? " session · " : " sessions · ") + minutes(report.durationSeconds);
      drawBars(chart.querySelector("canvas"), dayList(range, report));
      if (range === "month") showExports(report.sessions);
    } catch (e) { chart.querySelector(".total").textContent = "unavailable"; }
  }
  const box = document.getElementById("medals");
  if (!userIds.length) return;
  const blocks = [];
  for (const user of userIds) {
    try {
      const m = await getJSON("api/medals?user=" + encodeURIComponent(user));
      const block = el("div", "user"); block.dataset.user = user;
      block.append(el("b", null, user));
      const badges = el("div", "badges");
      for (const [name, earned] of Object.entries(m.medals)) {
        const b = el("span", earned ? "badge earned" : "badge", name.replace(/([A-Z])/g, " $1").toLowerCase());
        b.dataset.medal = name; b.dataset.earned = String(earned); badges.append(b);
      }
      block.append(badges); blocks.push(block);
    } catch (e) { /* shown again on the next refresh */ }
  }
  if (blocks.length) box.replaceChildren(...blocks);
}

async function start() {
  connect();
  requestAnimationFrame(frame);
  await refreshStatus();
  await refreshSessions();
  setInterval(refreshStatus, 3000);
  setInterval(refreshSessions, 15000);
}
start();
"""#
}
