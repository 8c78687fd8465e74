// The minikubelet timeline: swimlanes of a trace, drawn on a canvas, with each event's causes.
// Plain JavaScript, no dependencies: the page must open from a file with no network.
(function () {
  'use strict';
  // Errors are kept for the tests, which fail on any.
  var errors = [];
  window.addEventListener('error', function (ev) { errors.push(String(ev.message)); });
  var data = JSON.parse(document.getElementById('timeline').textContent);

  // Components in pipeline order; a component not listed gets a lane after these, in the order
  // it first appears.
  var ORDER = ['scenario', 'sources', 'podconfig', 'syncloop', 'housekeeping', 'podmanager', 'podworkers',
    'workqueue', 'runtime', 'pleg', 'status', 'podstartup', 'mirror', 'node', 'apiserver', 'events',
    'pluginwatcher', 'pluginmanager', 'devicemanager', 'csi'];
  var WORKER = { sync: '#3b82f6', terminating: '#f59e0b', terminated: '#a855f7', finished: '#9ca3af' };
  var CTR = { waiting: '#facc15', running: '#22c55e', failed: '#ef4444', done: '#cbd5e1' };
  // The ruler has two rows: the steps' markers and numbers, then the time's ticks and labels.
  var LABEL_W = 230, RULER_H = 44, STEP_Y = 15, LANE_H = 18, CTR_H = 16, FONT = '11px system-ui, sans-serif';

  var events = [];     // in seq order
  var bySeq = [];      // seq -> event
  var kids = [];       // seq -> seqs of its effects
  var lanes = [];      // drawn top to bottom
  var laneById = {};
  var compLanes = {};
  var end = data.end || 0;
  var dirty = true;

  function S(v) { return typeof v === 'number' ? data.strings[v] : (v || ''); }

  // ingest takes an event in the compact form of the page (an array) or the trace's JSON form
  // (an object, as the live feed sends it).
  function ingest(a) {
    var e;
    if (Array.isArray(a)) {
      e = { seq: a[0], cause: a[1], t: a[2], c: S(a[3]), k: S(a[4]), pod: S(a[5]), uid: S(a[6]), ctr: S(a[7]),
        op: S(a[8]), src: S(a[9]), from: S(a[10]), to: S(a[11]), exit: a[12], delay: a[13], reason: S(a[14]),
        msg: S(a[15]), fn: S(a[16]), pods: a[17] ? a[17].map(S) : null };
    } else {
      e = { seq: a.seq, cause: a.cause || 0, t: a.t, c: a.component, k: a.event, pod: a.pod || '', uid: a.uid || '',
        ctr: a.container || '', op: a.op || '', src: a.source || '', from: a.from || '', to: a.to || '',
        exit: a.exitCode === undefined ? null : a.exitCode, delay: a.delay || 0, reason: a.reason || '',
        msg: a.message || '', fn: a.func || '', pods: a.pods || null };
      if (a.func && a.funcURL) data.funcs[a.component + '/' + a.func] = a.funcURL;
    }
    if (!e.seq || bySeq[e.seq]) return;
    events.push(e);
    bySeq[e.seq] = e;
    if (e.cause) (kids[e.cause] = kids[e.cause] || []).push(e.seq);
    if (e.t > end) end = e.t;
    place(e);
    dirty = true;
  }

  function lane(id, make) {
    var l = laneById[id];
    if (!l) {
      l = make();
      l.id = id; l.events = []; l.bands = []; l.marks = [];
      laneById[id] = l;
      lanes.push(l);
      sortLanes();
    }
    return l;
  }

  function sortLanes() {
    lanes.sort(function (a, b) {
      if (a.group !== b.group) return a.group - b.group;
      if (typeof a.key === 'number') return a.key - b.key;
      // Pods in natural order: p2 before p10.
      return a.key.localeCompare(b.key, 'en', { numeric: true });
    });
  }

  function compLane(c) {
    return lane('c:' + c, function () {
      var i = ORDER.indexOf(c);
      return { kind: 'comp', label: c, group: 0, key: (i < 0 ? 100 + Object.keys(compLanes).length : i) + 1000, h: LANE_H, comp: c };
    });
  }
  function podLane(p) {
    return lane('p:' + p, function () {
      return { kind: 'pod', label: p, group: 1, key: p + '\u0000', h: LANE_H, pod: p, state: null };
    });
  }
  // ctrLane is a container's lane under its pod's, in the order the containers first appear in
  // the trace: init containers and sidecars in the order they ran, then the others.
  function ctrLane(p, c, seq) {
    return lane('k:' + p + '/' + c, function () {
      return { kind: 'ctr', label: '  ' + c, group: 1, key: p + '\u0000' + ('000000000000' + seq).slice(-12), h: CTR_H, pod: p, ctr: c, state: null, starts: 0 };
    });
  }

  // place puts an event on its lanes and extends the state bands it changes.
  function place(e) {
    var cl = compLanes[e.c] || (compLanes[e.c] = compLane(e.c));
    cl.events.push(e);
    if (!e.pod || e.c === 'node' || e.c === 'scenario') return;
    var pl = podLane(e.pod);
    if (e.ctr && (e.c === 'runtime' || e.c === 'pleg')) {
      var kl = ctrLane(e.pod, e.ctr, e.seq);
      kl.events.push(e);
      containerState(kl, e);
    } else {
      pl.events.push(e);
    }
    if (e.c === 'podworkers' && e.k === 'state') {
      band(pl, e.t, e.to ? WORKER[e.to] || '#64748b' : null, e.to);
    }
  }

  // band closes the lane's open band at t and opens one of color (none when color is null).
  function band(l, t, color, label) {
    var last = l.bands[l.bands.length - 1];
    if (last && last.end === null) last.end = t;
    if (color) l.bands.push({ start: t, end: null, color: color, label: label || '' });
  }

  function containerState(l, e) {
    switch (e.k) {
      case 'pull': case 'created': case 'failed':
        if (l.state !== 'running') { band(l, e.t, CTR.waiting, e.k === 'pull' ? 'pulling' : 'waiting'); l.state = 'waiting'; }
        break;
      case 'started':
        if (l.gap && l.gap.from === l.lastExit) l.gap.t = e.t;
        l.starts++;
        band(l, e.t, CTR.running, l.starts > 1 ? 'running, restart ' + (l.starts - 1) : 'running');
        if (l.starts > 1) l.marks.push({ t: e.t, type: 'restart', label: '\u21bb' + (l.starts - 1) });
        l.state = 'running';
        break;
      case 'exited':
        band(l, e.t, e.exit ? CTR.failed : CTR.done, 'exit ' + (e.exit === null ? '?' : e.exit));
        l.marks.push({ t: e.t, type: 'exit', label: 'exit ' + (e.exit === null ? '?' : e.exit) });
        l.lastExit = e.t;
        l.state = 'terminated';
        // A kill's grace period ends here.
        if (l.grace && l.grace.end === null) l.grace.end = e.t;
        break;
      case 'removed':
        // The status keeps the last termination after the dead container is gone.
        break;
      case 'killing':
        if (e.delay) { l.grace = { start: e.t, end: null, due: e.t + e.delay, type: 'grace', label: 'grace ' + fmtDur(e.delay) }; l.marks.push(l.grace); }
        break;
      case 'backoff':
        // One gap per exit, from the exit to the last sync the back-off held back; the label
        // is the back-off's length as the kubelet's message gives it.
        // The status turns Waiting (CrashLoopBackOff) once a sync runs into the back-off.
        // The gap's label names it; the band stays unlabelled so that the two do not overlap.
        if (l.state === 'terminated') { band(l, e.t, CTR.waiting, ''); l.state = 'waiting'; }
        if (l.gap && l.gap.from === l.lastExit) { l.gap.t = e.t; break; }
        var m = /Back-off (\S+)/.exec(e.msg);
        var d = e.delay ? fmtDur(e.delay) : m ? m[1] : '';
        l.gap = { t: e.t, type: 'backoff', from: l.lastExit === undefined ? e.t : l.lastExit, label: 'back-off ' + d };
        l.marks.push(l.gap);
        break;
    }
  }

  function fmtDur(s) {
    if (s >= 60) {
      var m = Math.floor(s / 60), r = Math.round((s - m * 60) * 1000) / 1000;
      return m + 'm' + (r ? r + 's' : '');
    }
    return (Math.round(s * 1000) / 1000) + 's';
  }
  function fmtT(t) { return (Math.round(t * 1000) / 1000).toFixed(3) + 's'; }

  // ---- view state ----
  var canvas = document.getElementById('canvas'), ctx = canvas.getContext('2d');
  var holder = document.getElementById('lanes');
  var view = { t0: 0, t1: 1, scroll: 0, w: 0, h: 0 };
  var filter = '';
  var selected = null, chainSet = {}, effectSet = {}, chain = [];
  var follow = true;

  function visibleLanes() {
    if (!filter) return lanes;
    return lanes.filter(function (l) { return l.kind === 'comp' || l.pod.indexOf(filter) >= 0; });
  }
  function xOf(t) { return LABEL_W + (t - view.t0) / (view.t1 - view.t0) * (view.w - LABEL_W - 8); }
  function tOf(x) { return view.t0 + (x - LABEL_W) / (view.w - LABEL_W - 8) * (view.t1 - view.t0); }

  function fit() {
    var span = Math.max(end, 1);
    view.t0 = -span * 0.01; view.t1 = span * 1.02;
    dirty = true;
  }

  function resize() {
    var r = holder.getBoundingClientRect(), dpr = window.devicePixelRatio || 1;
    view.w = r.width; view.h = r.height;
    canvas.width = Math.floor(r.width * dpr); canvas.height = Math.floor(r.height * dpr);
    canvas.style.width = r.width + 'px'; canvas.style.height = r.height + 'px';
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    dirty = true;
  }

  // first returns the index of the first event of list at or after t.
  function first(list, t) {
    var lo = 0, hi = list.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (list[mid].t < t) lo = mid + 1; else hi = mid; }
    return lo;
  }

  var stats = { drawn: 0, ms: 0 };
  // labels holds the box of every text drawn on the canvas, and ticks the last event tick drawn
  // over each, for the tests: no text may cover another, and nothing is drawn over a text.
  var labels = [];
  function textBox(str, x, y, kind, color, back) {
    var m = ctx.measureText(str), w = m.width, up = m.actualBoundingBoxAscent || 8, down = m.actualBoundingBoxDescent || 3;
    if (back) { ctx.fillStyle = back; ctx.fillRect(x - 2, y - up - 1, w + 4, up + down + 2); }
    ctx.fillStyle = color;
    ctx.fillText(str, x, y);
    var box = { text: str, kind: kind, x: x, y: y - up, w: w, h: up + down };
    labels.push(box);
    return box;
  }

  function draw() {
    var t0 = performance.now();
    dirty = false;
    labels = [];
    for (var k = 0; k < lanes.length; k++) lanes[k].labelBox = null;
    var W = view.w, H = view.h;
    ctx.clearRect(0, 0, W, H);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    var vis = visibleLanes();
    var total = vis.reduce(function (s, l) { return s + l.h; }, 0);
    view.scroll = Math.max(0, Math.min(view.scroll, Math.max(0, total - (H - RULER_H))));
    var y = RULER_H - view.scroll, drawn = 0, positions = {}, pending = [];
    var tlo = tOf(LABEL_W - 4), thi = tOf(W);
    for (var i = 0; i < vis.length; i++) {
      var l = vis[i];
      l.y = y;
      if (y + l.h >= RULER_H && y <= H) {
        drawn += drawLane(l, y, tlo, thi, positions, pending);
      }
      y += l.h;
    }
    drawSteps(H);
    drawLinks(positions);
    // The labels inside the lanes go over the ticks, the step lines and the links, each where it
    // covers no other label of its lane, in the order of importance.
    ctx.font = FONT;
    for (i = 0; i < pending.length; i++) drawLaneLabels(pending[i]);
    drawRuler(W);
    // lane names last, over the bands
    ctx.fillStyle = '#fafbfc'; ctx.fillRect(0, RULER_H, LABEL_W, H);
    for (i = 0; i < vis.length; i++) {
      l = vis[i];
      if (l.y + l.h / 2 - 6 < RULER_H || l.y > H) continue;
      ctx.font = (l.kind === 'pod' ? '600 ' : '') + FONT;
      var label = l.kind === 'pod' ? 'worker ' + l.label : l.label;
      label = label.length > 36 ? label.slice(0, 35) + '\u2026' : label;
      l.labelBox = textBox(label, 6, l.y + l.h / 2, 'lane', l.kind === 'comp' ? '#1d232a' : l.kind === 'pod' ? '#1e3a8a' : '#4a5560');
    }
    ctx.font = FONT;
    ctx.fillStyle = '#fafbfc'; ctx.fillRect(0, 0, LABEL_W, RULER_H);
    stats.drawn = drawn; stats.ms = performance.now() - t0;
    api.positions = positions;
    api.labels = labels;
  }

  function drawLane(l, y, tlo, thi, positions, pending) {
    ctx.fillStyle = l.kind === 'comp' ? '#f1f4f7' : '#ffffff';
    ctx.fillRect(LABEL_W, y, view.w - LABEL_W, l.h);
    ctx.strokeStyle = '#e3e7eb'; ctx.beginPath(); ctx.moveTo(LABEL_W, y + l.h - 0.5); ctx.lineTo(view.w, y + l.h - 0.5); ctx.stroke();
    // texts to draw once every tick is drawn: rank 0 first (the back-off's length, the grace
    // period), then the bands' states
    var texts = { lane: l, y: y + l.h / 2, list: [] };
    pending.push(texts);
    // bands, merged below a pixel
    var lastX = -1;
    for (var b = 0; b < l.bands.length; b++) {
      var bd = l.bands[b], be = bd.end === null ? end : bd.end;
      if (be < tlo || bd.start > thi) continue;
      var x0 = Math.max(LABEL_W, xOf(bd.start)), x1 = Math.min(view.w, xOf(be));
      if (x1 - x0 < 1 && Math.floor(x0) === lastX) continue;
      lastX = Math.floor(x0);
      ctx.fillStyle = bd.color; ctx.globalAlpha = 0.55;
      ctx.fillRect(x0, y + 2, Math.max(1, x1 - x0), l.h - 4);
      ctx.globalAlpha = 1;
      if (bd.label) texts.list.push({ rank: 2, text: bd.label, x: x0 + 3, max: x1 - 3, color: '#1d232a', kind: 'band' });
    }
    // marks: back-off gaps, grace countdowns, restarts
    for (var m = 0; m < l.marks.length; m++) {
      var mk = l.marks[m];
      if (mk.type === 'grace') {
        var ge = mk.end === null ? Math.min(mk.due, end) : mk.end;
        var gx0 = xOf(mk.start), gx1 = xOf(ge), gd = xOf(mk.due);
        if (gd < LABEL_W || gx0 > view.w) continue;
        ctx.strokeStyle = '#b45309'; ctx.setLineDash([3, 2]); ctx.strokeRect(gx0, y + 1, Math.max(1, gd - gx0), l.h - 2); ctx.setLineDash([]);
        ctx.fillStyle = 'rgba(245,158,11,0.35)'; ctx.fillRect(gx0, y + 1, Math.max(1, gx1 - gx0), l.h - 2);
        texts.list.push({ rank: 0, text: mk.label + ' (used ' + fmtDur(Math.round((ge - mk.start) * 1000) / 1000) + ')', x: Math.max(LABEL_W, gx0) + 3, max: view.w, color: '#92400e', kind: 'grace' });
      } else if (mk.type === 'backoff') {
        var bx0 = xOf(mk.from), bx1 = xOf(mk.t);
        if (bx1 < LABEL_W || bx0 > view.w) continue;
        ctx.strokeStyle = '#dc2626'; ctx.fillStyle = '#dc2626'; ctx.beginPath(); ctx.moveTo(bx0, y + l.h - 2); ctx.lineTo(bx1, y + l.h - 2); ctx.stroke();
        ctx.fillRect(bx0, y + l.h - 5, 1, 4);
        texts.list.push({ rank: 0, text: mk.label, x: Math.max(LABEL_W, bx0) + 3, max: view.w, color: '#b91c1c', kind: 'backoff' });
      } else if (mk.type === 'exit') {
        var ex = xOf(mk.t);
        if (ex < LABEL_W || ex > view.w) continue;
        ctx.fillStyle = '#7f1d1d'; ctx.fillRect(ex, y + 1, 1.5, l.h - 2);
      } else if (mk.type === 'restart') {
        var rx = xOf(mk.t);
        if (rx < LABEL_W || rx > view.w) continue;
        ctx.fillStyle = '#166534'; ctx.beginPath(); ctx.moveTo(rx, y + 1); ctx.lineTo(rx + 5, y + 1); ctx.lineTo(rx, y + 7); ctx.fill();
      }
    }
    // events: one tick per pixel column, except the highlighted ones
    var list = l.events, n = 0;
    lastX = -1;
    for (var i = first(list, tlo); i < list.length && list[i].t <= thi; i++) {
      var e = list[i], x = xOf(e.t), px = Math.floor(x);
      var hot = chainSet[e.seq] || effectSet[e.seq] || (selected && e.seq === selected.seq);
      if (hot) positions[e.seq] = positions[e.seq] || { x: x, y: y + l.h / 2 };
      if (px === lastX && !hot) continue;
      lastX = px; n++;
      if (!positions[e.seq]) positions[e.seq] = { x: x, y: y + l.h / 2 };
      ctx.fillStyle = tickColor(e);
      ctx.fillRect(px, y + 3, 2, l.h - 6);
    }
    // highlighted on top
    for (i = first(list, tlo); i < list.length && list[i].t <= thi; i++) {
      e = list[i];
      if (!(chainSet[e.seq] || effectSet[e.seq] || (selected && e.seq === selected.seq))) continue;
      x = xOf(e.t);
      ctx.fillStyle = selected && e.seq === selected.seq ? '#111827' : chainSet[e.seq] ? '#ea580c' : '#0891b2';
      ctx.beginPath(); ctx.arc(x, y + l.h / 2, 4.5, 0, 7); ctx.fill();
    }
    return n;
  }

  // drawLaneLabels draws the texts of one lane that fit: a text goes where it covers no text
  // already placed in the lane, and a band's state only inside its band. The ones left out come
  // back when a zoom makes room.
  function drawLaneLabels(texts) {
    var l = texts.lane;
    if (texts.y - 6 < RULER_H || texts.y > view.h) return;
    texts.list.sort(function (a, b) { return a.rank - b.rank || a.x - b.x; });
    var taken = [];
    for (var i = 0; i < texts.list.length; i++) {
      var t = texts.list[i], w = ctx.measureText(t.text).width;
      if (t.x + w > Math.min(t.max, view.w - 2)) continue;
      var x0 = t.x - 3, x1 = t.x + w + 3, free = true;
      for (var j = 0; j < taken.length && free; j++) free = x1 <= taken[j][0] || x0 >= taken[j][1];
      if (!free) continue;
      taken.push([x0, x1]);
      textBox(t.text, t.x, texts.y, t.kind, t.color, l.kind === 'comp' ? '#f1f4f7' : '#ffffff');
    }
  }

  function tickColor(e) {
    if (e.k === 'error' || e.k === 'Warning' || e.k === 'failed' || e.k === 'backoff') return '#dc2626';
    if (e.c === 'scenario') return '#7c3aed';
    if (e.c === 'pleg') return '#0f766e';
    if (e.c === 'apiserver') return '#1d4ed8';
    return '#334155';
  }

  function drawSteps(H) {
    var steps = data.steps || [];
    for (var i = 0; i < steps.length; i++) {
      var s = steps[i], x = xOf(s.at);
      if (x < LABEL_W || x > view.w) continue;
      var failed = s.met === false;
      ctx.strokeStyle = failed ? '#dc2626' : s.met ? 'rgba(22,163,74,0.35)' : 'rgba(124,58,237,0.45)';
      ctx.lineWidth = failed ? 2 : 1;
      ctx.setLineDash(s.met === undefined || s.met === null ? [4, 3] : []);
      ctx.beginPath(); ctx.moveTo(x, RULER_H); ctx.lineTo(x, H); ctx.stroke();
      ctx.setLineDash([]); ctx.lineWidth = 1;
    }
  }

  function stepColor(s) { return s.met === false ? '#dc2626' : s.met ? '#16a34a' : '#7c3aed'; }

  // stepGroups gathers the visible steps into groups whose numbers fit side by side: a step whose
  // marker is too close to the group before joins it, and the group is labelled with the range
  // of its numbers ("3-6"), red if one of them failed, purple if one is an action.
  function stepGroups() {
    var ss = data.steps || [], groups = [], g = null;
    for (var i = 0; i < ss.length; i++) {
      var s = ss[i], x = xOf(s.at);
      if (x < LABEL_W || x > view.w) continue;
      if (g && x - g.x1 < ctx.measureText(groupText(g) + '\u2013' + s.n).width / 2 + 8) {
        g.steps.push(s); g.x1 = x;
        continue;
      }
      g = { steps: [s], x0: x, x1: x };
      groups.push(g);
    }
    return groups;
  }
  function groupText(g) {
    var a = g.steps[0].n, b = g.steps[g.steps.length - 1].n;
    return a === b ? String(a) : a + '\u2013' + b;
  }
  function groupColor(g) {
    var c = '#16a34a';
    for (var i = 0; i < g.steps.length; i++) {
      if (g.steps[i].met === false) return '#dc2626';
      if (g.steps[i].met !== true) c = '#7c3aed';
    }
    return c;
  }

  function drawLinks(positions) {
    if (!selected) return;
    ctx.lineWidth = 1.5;
    for (var i = 0; i + 1 < chain.length; i++) {
      var a = positions[chain[i]], b = positions[chain[i + 1]];
      if (!a || !b) continue;
      ctx.strokeStyle = '#ea580c';
      ctx.beginPath(); ctx.moveTo(a.x, a.y); ctx.lineTo(b.x, b.y); ctx.stroke();
    }
    var direct = kids[selected.seq] || [];
    var p = positions[selected.seq];
    for (i = 0; p && i < direct.length && i < 200; i++) {
      var q = positions[direct[i]];
      if (!q) continue;
      ctx.strokeStyle = '#0891b2';
      ctx.beginPath(); ctx.moveTo(p.x, p.y); ctx.lineTo(q.x, q.y); ctx.stroke();
    }
    ctx.lineWidth = 1;
  }

  function drawRuler(W) {
    ctx.font = FONT;
    ctx.fillStyle = '#fff'; ctx.fillRect(LABEL_W, 0, W - LABEL_W, RULER_H);
    ctx.strokeStyle = '#d8dde3'; ctx.beginPath(); ctx.moveTo(LABEL_W, RULER_H - 0.5); ctx.lineTo(W, RULER_H - 0.5); ctx.stroke();
    var span = view.t1 - view.t0, target = span / 10, steps = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200];
    var step = steps[steps.length - 1];
    for (var i = 0; i < steps.length; i++) if (steps[i] >= target) { step = steps[i]; break; }
    var right = -1;
    for (var t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
      var x = xOf(t);
      if (x < LABEL_W) continue;
      ctx.fillStyle = '#4a5560';
      ctx.fillRect(x, RULER_H - 6, 1, 6);
      var str = fmtDur(Math.round(t * 1000) / 1000), w = ctx.measureText(str).width;
      if (x + 2 <= right + 6 || x + 2 + w > W - 2) continue;
      textBox(str, x + 2, RULER_H - 14, 'tick', '#4a5560');
      right = x + 2 + w;
    }
    // step markers: purple for actions, green or red for checks; each numbered, close ones as
    // a range
    var ss = data.steps || [];
    for (i = 0; i < ss.length; i++) {
      var s = ss[i];
      x = xOf(s.at);
      if (x < LABEL_W || x > W) continue;
      ctx.fillStyle = stepColor(s);
      ctx.beginPath(); ctx.moveTo(x - 4, 1); ctx.lineTo(x + 4, 1); ctx.lineTo(x, 7); ctx.fill();
    }
    var groups = stepGroups(), placed = LABEL_W;
    ctx.font = '600 ' + FONT;
    for (i = 0; i < groups.length; i++) {
      var g = groups[i], label = groupText(g), gw = ctx.measureText(label).width;
      var gx = Math.max(placed + 4, Math.min((g.x0 + g.x1) / 2 - gw / 2, W - gw - 2));
      if (gx + gw > W - 1) continue;
      textBox(label, gx, STEP_Y, 'step', groupColor(g));
      placed = gx + gw;
    }
    ctx.font = FONT;
  }

  // ---- interaction ----
  function laneAt(y) {
    var vis = visibleLanes();
    for (var i = 0; i < vis.length; i++) if (y >= vis[i].y && y < vis[i].y + vis[i].h) return vis[i];
    return null;
  }

  function hit(x, y) {
    if (y < RULER_H) {
      // a step's marker, or the number of a group of steps
      ctx.font = '600 ' + FONT;
      var groups = stepGroups(), best = null, bd = 8;
      ctx.font = FONT;
      for (var i = 0; i < groups.length; i++) {
        var g = groups[i], d = x < g.x0 ? g.x0 - x : x > g.x1 ? x - g.x1 : 0;
        if (d < bd) { bd = d; best = g; }
      }
      if (best) showSteps(best.steps);
      return;
    }
    var l = laneAt(y);
    if (l && x < LABEL_W) { showTerm(termOf(laneWord(l)), l.label.trim()); return; }
    if (!l) return;
    var t = tOf(x), tol = 6 * (view.t1 - view.t0) / (view.w - LABEL_W), list = l.events, bestE = null, bestD = Infinity;
    for (var j = first(list, t - tol); j < list.length && list[j].t <= t + tol; j++) {
      var dd = Math.abs(list[j].t - t);
      if (dd < bestD) { bestD = dd; bestE = list[j]; }
    }
    if (bestE) select(bestE.seq, l);
  }

  function ancestors(seq) {
    var out = [], guard = 0;
    for (var e = bySeq[seq]; e && guard < 10000; e = bySeq[e.cause], guard++) out.unshift(e.seq);
    return out;
  }
  function descendants(seq, limit) {
    var out = {}, queue = [seq], n = 0;
    while (queue.length && n < limit) {
      var s = queue.shift(), ks = kids[s] || [];
      for (var i = 0; i < ks.length && n < limit; i++) { if (!out[ks[i]]) { out[ks[i]] = true; n++; queue.push(ks[i]); } }
    }
    return out;
  }

  function select(seq, inLane) {
    var e = bySeq[seq];
    if (!e) return;
    selected = e;
    chain = ancestors(seq);
    chainSet = {}; chain.forEach(function (s) { chainSet[s] = true; });
    effectSet = descendants(seq, 5000);
    render(e, inLane);
    dirty = true;
  }

  // ---- glossary ----
  var gloss = data.glossary || [];
  // termOf returns the index of the glossary's term a word names (its term or one of its links,
  // as written, else in any case), -1 for none.
  function termOf(word) {
    if (!word) return -1;
    for (var pass = 0; pass < 2; pass++) {
      var w = pass ? String(word).toLowerCase() : String(word);
      for (var i = 0; i < gloss.length; i++) {
        var names = [gloss[i].term].concat(gloss[i].links || []);
        for (var j = 0; j < names.length; j++) if ((pass ? names[j].toLowerCase() : names[j]) === w) return i;
      }
    }
    return -1;
  }
  // laneWord is the word of the glossary that says what a lane is.
  function laneWord(l) { return l.kind === 'comp' ? l.comp : l.kind === 'pod' ? 'pod worker' : 'sandbox'; }
  // gl writes a word as a link to its glossary entry when it has one.
  function gl(word) {
    var i = termOf(word);
    return i < 0 ? esc(word) : '<a href="#" class="gl" data-term="' + i + '">' + esc(word) + '</a>';
  }
  function showTerm(i, from) {
    var d = document.getElementById('details'), t = gloss[i];
    if (!t) {
      d.innerHTML = '<h2>' + esc(from || 'Glossary') + '</h2><p class="hint">The glossary has no entry for it.</p>';
      return;
    }
    var h = ['<h2 id="term-title">' + esc(t.term) + '</h2>'];
    if (t.stands) h.push('<p class="term-stands">' + esc(t.stands) + '</p>');
    h.push('<p id="term-definition">' + esc(t.definition) + '</p>');
    if (t.kubelet) h.push('<p class="term-where">Kubelet: ' + esc(t.kubelet) + '</p>');
    if (t.links && t.links.length) h.push('<p class="term-where">In the trace: ' + t.links.map(esc).join(', ') + '</p>');
    h.push('<p><a href="#" class="gl" data-term="all">the whole glossary</a></p>');
    d.innerHTML = h.join('');
  }
  function showGlossary() {
    var h = ['<h2 id="term-title">Glossary</h2><ul class="terms">'];
    gloss.forEach(function (t, i) { h.push('<li data-term="' + i + '">' + esc(t.term) + '</li>'); });
    h.push('</ul>');
    document.getElementById('details').innerHTML = h.join('');
  }

  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]; }); }

  function summary(e) {
    var parts = [fmtT(e.t), e.c, e.k];
    if (e.pod) parts.push(e.pod);
    if (e.ctr) parts.push(e.ctr);
    if (e.op) parts.push(e.op);
    if (e.to) parts.push('\u2192' + e.to);
    return parts.join(' ');
  }

  function render(e, inLane) {
    var d = document.getElementById('details'), h = [];
    h.push('<h2 id="sel-title">#' + e.seq + ' ' + esc(e.c) + ' ' + esc(e.k) + '</h2><table id="fields">');
    var rows = [['t', fmtT(e.t)], ['seq', e.seq], ['cause', e.cause || '(root)'], ['component', e.c], ['event', e.k], ['pod', e.pod], ['uid', e.uid],
      ['container', e.ctr], ['op', e.op], ['source', e.src], ['pods', e.pods ? '[' + e.pods.join(' ') + ']' : ''], ['from', e.from], ['to', e.to],
      ['exitCode', e.exit === null || e.exit === undefined ? '' : e.exit], ['delay', e.delay ? fmtDur(e.delay) : ''], ['reason', e.reason], ['message', e.msg]];
    var linked = { component: 1, event: 1, op: 1, from: 1, to: 1, reason: 1 };
    rows.forEach(function (r) {
      if (r[1] !== '' && r[1] !== null) h.push('<tr><td class="k">' + r[0] + '</td><td>' + (linked[r[0]] ? gl(String(r[1])) : esc(r[1])) + '</td></tr>');
    });
    if (e.fn) {
      var url = data.funcs[e.c + '/' + e.fn];
      h.push('<tr><td class="k">func</td><td id="func">' + (url ? '<a target="_blank" rel="noopener" href="' + esc(url) + '">' + esc(e.fn) + '</a> (kubelet v1.35)' : esc(e.fn)) + '</td></tr>');
    }
    h.push('</table>');
    // The diff is kept on the sync loop's config event; PodConfig's update shows its handler's.
    var diff = data.diffs && data.diffs[e.seq];
    (kids[e.seq] || []).forEach(function (k) { if (!diff && data.diffs && bySeq[k].c === 'syncloop') diff = data.diffs[k]; });
    if (diff) {
      h.push('<h3>Pod diff</h3><pre class="diff">' + diff.split('\n').map(function (line) {
        var c = line[0] === '+' ? 'add' : line[0] === '-' ? 'del' : '';
        return '<span class="' + c + '">' + esc(line) + '</span>';
      }).join('\n') + '</pre>');
    }
    h.push('<h3>Cause chain (' + chain.length + ')</h3><ol id="chain">');
    chain.forEach(function (s) {
      var c = bySeq[s];
      h.push('<li class="chain-item' + (s === e.seq ? ' self' : '') + '" data-seq="' + s + '">#' + s + ' ' + esc(summary(c)) + (c.fn ? ' [' + esc(c.fn) + ']' : '') + '</li>');
    });
    h.push('</ol>');
    var eff = Object.keys(effectSet).map(Number).sort(function (a, b) { return a - b; });
    h.push('<h3>Effects (' + eff.length + (eff.length >= 5000 ? '+' : '') + ')</h3><ul id="effects">');
    eff.slice(0, 60).forEach(function (s) { h.push('<li class="effect-item" data-seq="' + s + '">#' + s + ' ' + esc(summary(bySeq[s])) + '</li>'); });
    if (eff.length > 60) h.push('<li class="hint">\u2026 ' + (eff.length - 60) + ' more, highlighted in blue</li>');
    h.push('</ul>');
    if (inLane) {
      var same = inLane.events.filter(function (o) { return o.t === e.t && o.seq !== e.seq; });
      if (same.length) {
        h.push('<h3>Same instant, same lane</h3><ul>');
        same.slice(0, 40).forEach(function (o) { h.push('<li data-seq="' + o.seq + '">#' + o.seq + ' ' + esc(summary(o)) + '</li>'); });
        h.push('</ul>');
      }
    }
    d.innerHTML = h.join('');
  }

  function stepHTML(s, head) {
    var h = ['<' + head + '>Step ' + s.n + ' at ' + fmtT(s.at) + ': ' + esc(s.action) + '</' + head + '>'];
    if (s.what) h.push('<p>' + esc(s.what) + '</p><p class="' + (s.met ? 'ok' : 'fail') + '">' + (s.met ? 'met' : s.met === false ? 'FAILED: saw ' + esc(s.seen) : 'not reached') + '</p>');
    if (s.seq) h.push('<ul><li data-seq="' + s.seq + '">#' + s.seq + ' the step\'s event (select to see its effects)</li></ul>');
    return h.join('');
  }
  function showSteps(list) {
    var d = document.getElementById('details');
    if (list.length === 1) { d.innerHTML = stepHTML(list[0], 'h2'); return; }
    d.innerHTML = '<h2>Steps ' + list[0].n + '\u2013' + list[list.length - 1].n + '</h2>' + list.map(function (s) { return stepHTML(s, 'h3'); }).join('');
  }

  document.getElementById('details').addEventListener('click', function (ev) {
    var term = ev.target.closest('[data-term]');
    if (term) {
      ev.preventDefault();
      var ti = term.getAttribute('data-term');
      if (ti === 'all') showGlossary(); else showTerm(+ti);
      return;
    }
    var li = ev.target.closest('[data-seq]');
    if (li) { var s = +li.getAttribute('data-seq'); select(s); reveal(bySeq[s]); }
  });
  document.getElementById('gloss').onclick = showGlossary;
  document.getElementById('legend').addEventListener('click', function (ev) {
    var span = ev.target.closest('[data-term]');
    if (span) showTerm(termOf(span.getAttribute('data-term')));
  });

  function reveal(e) {
    if (!e) return;
    if (e.t < view.t0 || e.t > view.t1) { var span = view.t1 - view.t0; view.t0 = e.t - span / 2; view.t1 = e.t + span / 2; }
    dirty = true;
  }

  var drag = null;
  canvas.addEventListener('mousedown', function (ev) { drag = { x: ev.offsetX, t0: view.t0, t1: view.t1, moved: false }; });
  window.addEventListener('mousemove', function (ev) {
    if (!drag) return;
    var rect = canvas.getBoundingClientRect(), dx = ev.clientX - rect.left - drag.x;
    if (Math.abs(dx) > 3) drag.moved = true;
    if (!drag.moved) return;
    var dt = dx / (view.w - LABEL_W - 8) * (drag.t1 - drag.t0);
    view.t0 = drag.t0 - dt; view.t1 = drag.t1 - dt; follow = false; dirty = true;
  });
  window.addEventListener('mouseup', function (ev) {
    if (drag && !drag.moved && ev.target === canvas) hit(ev.offsetX, ev.offsetY);
    drag = null;
  });
  canvas.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    if (ev.ctrlKey || ev.metaKey) { zoom(ev.deltaY < 0 ? 0.8 : 1.25, tOf(ev.offsetX)); return; }
    if (ev.shiftKey) { var dt = ev.deltaY / (view.w - LABEL_W) * (view.t1 - view.t0); view.t0 += dt; view.t1 += dt; follow = false; dirty = true; return; }
    view.scroll += ev.deltaY; dirty = true;
  }, { passive: false });

  function zoom(f, at) {
    if (at === undefined) at = (view.t0 + view.t1) / 2;
    var span = (view.t1 - view.t0) * f;
    if (span < 0.001) span = 0.001;
    view.t0 = at - (at - view.t0) * span / (view.t1 - view.t0);
    view.t1 = view.t0 + span;
    follow = false; dirty = true;
  }
  document.getElementById('fit').onclick = function () { follow = true; fit(); };
  document.getElementById('zin').onclick = function () { zoom(0.5); };
  document.getElementById('zout').onclick = function () { zoom(2); };
  document.getElementById('search').addEventListener('input', function (ev) { filter = ev.target.value.trim(); view.scroll = 0; dirty = true; });
  var desc = document.getElementById('desc');
  desc.onclick = function () { desc.classList.toggle('open'); };
  window.addEventListener('resize', resize);

  function header() {
    document.getElementById('name').textContent = data.name + (data.live ? ' (live)' : '');
    desc.textContent = data.description || '';
    var v = document.getElementById('verdict'), checks = (data.steps || []).filter(function (s) { return s.met !== undefined && s.met !== null; });
    var failed = checks.filter(function (s) { return !s.met; });
    if (checks.length) {
      v.textContent = failed.length ? failed.length + ' of ' + checks.length + ' expectations failed' : 'all ' + checks.length + ' expectations met';
      v.className = failed.length ? 'fail' : 'ok';
    }
  }

  function frame() {
    if (data.live && follow && end > view.t1 - (view.t1 - view.t0) * 0.02) fit();
    if (dirty) draw();
    document.getElementById('clock').textContent = events.length + ' events, ' + lanes.length + ' lanes, ' + fmtT(end);
    requestAnimationFrame(frame);
  }

  // api is for tests and the console.
  var api = {
    ready: false,
    lanes: function () { return lanes.map(function (l) { return l.label.trim(); }); },
    // visible lists the lanes the search leaves.
    visible: function () { return visibleLanes().map(function (l) { return l.label.trim(); }); },
    events: function () { return events.length; },
    stats: stats,
    errors: errors,
    draw: draw,
    // show sets the visible time range, in seconds.
    show: function (t0, t1) { view.t0 = t0; view.t1 = t1; follow = false; draw(); },
    select: select,
    // find returns the seq of the first event of component and kind on a pod whose name has pod
    // in it, 0 for none.
    find: function (component, kind, pod) {
      for (var i = 0; i < events.length; i++) {
        var e = events[i];
        if (e.c === component && e.k === kind && (!pod || e.pod.indexOf(pod) >= 0)) return e.seq;
      }
      return 0;
    },
    chain: function () { return chain.slice(); },
    // labels are the boxes of the texts the last draw drew, in canvas pixels: {text, kind, x, y,
    // w, h}, kind one of lane, band, backoff, grace, tick, step.
    labels: [],
    // stepGroups returns the step numbers as drawn above the time axis: each group's text and
    // the numbers of its steps.
    stepGroups: function () {
      ctx.font = '600 ' + FONT;
      var gs = stepGroups().map(function (g) { return { text: groupText(g), steps: g.steps.map(function (s) { return s.n; }) }; });
      ctx.font = FONT;
      return gs;
    },
    // laneLabel returns where a lane's name is drawn, in page coordinates, null when it is not.
    laneLabel: function (name) {
      var r = canvas.getBoundingClientRect();
      for (var i = 0; i < lanes.length; i++) {
        var l = lanes[i];
        if (l.label.trim() === name && l.labelBox) return { x: r.left + l.labelBox.x + l.labelBox.w / 2, y: r.top + l.labelBox.y + l.labelBox.h / 2 };
      }
      return null;
    },
    // point returns where an event is drawn, in page coordinates, after revealing it.
    point: function (seq) {
      var e = bySeq[seq];
      if (!e) return null;
      var lanesOf = [compLanes[e.c]];
      for (var i = 0; i < lanesOf.length; i++) {
        var l = lanesOf[i];
        if (l.y === undefined || l.y < RULER_H || l.y > view.h) continue;
        var r = canvas.getBoundingClientRect();
        return { x: r.left + xOf(e.t), y: r.top + l.y + l.h / 2 };
      }
      return null;
    },
    positions: {}
  };
  window.mkView = api;

  header();
  resize();
  var t0 = performance.now();
  (data.events || []).forEach(ingest);
  fit();
  draw();
  api.loadMs = performance.now() - t0;
  api.ready = true;
  requestAnimationFrame(frame);

  if (data.live) {
    var src = new EventSource('events');
    src.onmessage = function (m) { ingest(JSON.parse(m.data)); };
  }
})();
