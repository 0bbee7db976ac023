/// The live view's page and style: one small HTML document served from the binary (no CDN, so
/// it works offline); its behaviour is in ``WebAssets/script``.
enum WebAssets {
    static let page = Array(html.utf8)

    private static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>gyrogate live view</title>
<style>
:root { --bg:#f4f5f7; --card:#fff; --ink:#1d2330; --muted:#6b7280; --x:#d9480f; --y:#2b8a3e; --z:#1c7ed6; --ok:#2b8a3e; --warn:#e67700; --bad:#c92a2a; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background:var(--bg); color:var(--ink); }
header { padding:10px 16px; background:#1d2330; color:#fff; display:flex; flex-wrap:wrap; gap:6px 18px; align-items:baseline; }
header h1 { font-size:17px; margin:0; }
header .conn { font-size:12px; color:#cbd5e1; }
main { padding:12px; max-width:1200px; margin:0 auto; }
h2 { font-size:15px; margin:18px 4px 8px; }
.grid { display:grid; gap:12px; grid-template-columns:repeat(auto-fill, minmax(330px, 1fr)); }
.card { background:var(--card); border-radius:8px; padding:10px 12px; box-shadow:0 1px 2px rgba(0,0,0,.08); }
.facts { display:grid; gap:8px; grid-template-columns:repeat(auto-fill, minmax(150px, 1fr)); }
.fact b { display:block; font-size:12px; color:var(--muted); font-weight:normal; }
.fact span { font-size:16px; }
.sensor .top { display:flex; justify-content:space-between; align-items:baseline; gap:8px; }
.sensor .name { font-weight:600; font-size:15px; }
.sensor .addr { color:var(--muted); font-size:12px; font-family:ui-monospace, monospace; }
.state { border-radius:10px; padding:1px 8px; font-size:12px; color:#fff; background:var(--muted); white-space:nowrap; }
.state.streaming { background:var(--ok); }
.state.initialising, .state.connecting, .state.discovered { background:var(--warn); }
.state.silent, .state.backingOff, .state.stopped, .state.stale { background:var(--bad); }
.state.heldElsewhere { background:#8a8f98; }
.sensor .stats { display:flex; flex-wrap:wrap; gap:2px 14px; font-size:12px; color:var(--muted); margin:4px 0 6px; }
.sensor .stats span b { color:var(--ink); font-weight:600; }
canvas.trace { width:100%; height:140px; display:block; }
.legend { font-size:11px; color:var(--muted); }
.legend i { display:inline-block; width:10px; height:3px; margin:0 3px 2px 8px; vertical-align:middle; }
.chart .head { display:flex; justify-content:space-between; align-items:baseline; }
.chart .head span { color:var(--muted); font-size:12px; }
canvas.bars { width:100%; height:120px; display:block; }
.user { margin-bottom:8px; }
.badges { display:flex; flex-wrap:wrap; gap:6px; margin-top:4px; }
.badge { border-radius:14px; padding:3px 10px; font-size:12px; background:#e9ecef; color:#adb5bd; border:1px solid #dee2e6; }
.badge.earned { background:#fff3bf; color:#5c3c00; border-color:#f08c00; }
.badge.earned::before { content:"\2605 "; color:#f08c00; }
.empty { color:var(--muted); }
#exports div { display:flex; gap:10px; align-items:baseline; padding:2px 0; font-size:13px; }
#exports code { flex:1; overflow:hidden; text-overflow:ellipsis; }
@media (max-width:480px) { main { padding:8px; } .grid { grid-template-columns:1fr; } header h1 { font-size:15px; } }
</style>
</head>
<body>
<header><h1>gyrogate <span id="gateway"></span></h1><span class="conn" id="conn">connecting…</span></header>
<main>
<section class="card facts" id="facts">
  <div class="fact"><b>Broker</b><span id="broker">…</span></div>
  <div class="fact"><b>Outbox</b><span id="outbox">…</span></div>
  <div class="fact"><b>Store size</b><span id="store">…</span></div>
  <div class="fact"><b>Store writes</b><span id="writes">…</span></div>
  <div class="fact"><b>Clock</b><span id="clock">…</span></div>
</section>
<h2>Sensors</h2>
<section class="grid" id="sensors"><p class="empty">No sensors yet.</p></section>
<h2>Sessions</h2>
<section class="grid" id="sessions">
  <div class="card chart" data-range="today"><div class="head"><b>Today</b><span class="total"></span></div><canvas class="bars"></canvas></div>
  <div class="card chart" data-range="week"><div class="head"><b>This week</b><span class="total"></span></div><canvas class="bars"></canvas></div>
  <div class="card chart" data-range="month"><div class="head"><b>This month</b><span class="total"></span></div><canvas class="bars"></canvas></div>
</section>
<h2>Exports</h2>
<section class="card" id="exports"><p class="empty">No sessions this month.</p></section>
<h2>Medals and trophies</h2>
<section class="card" id="medals"><p class="empty">No users yet.</p></section>
</main>
<script src="app.js"></script>
</body>
</html>
"""#
}
