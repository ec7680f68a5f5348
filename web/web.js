// The browser demo's page: the desktop demo's simulation (demo/demo_sim.c, compiled with the
// library to WebAssembly by scripts/build_web.sh) drawn on a canvas. The C side owns the world
// and the scene; this file only draws what it hands out and turns clicks and keys into its calls.
// URL parameters: scene, n, seed, method, mode, partition=1 (the world's cells) or 2 (the method's
// structure), snap=1, frames=K (stop moving after
// frame K: how the test and docs/web.md's timings get a given frame). See docs/web.md.
'use strict';

(async () => {
  const q = new URLSearchParams(location.search);
  const hud = document.getElementById('hud');
  const status = document.getElementById('status');
  let M;
  try {
    M = await BroadphaseModule();
  } catch (e) {
    hud.textContent = 'cannot load broadphase.wasm: ' + e;
    return;
  }
  const num = (name, args) => M.cwrap(name, 'number', args || []);
  const W = {};
  for (const f of ['frame', 'set_method', 'set_mode', 'resize', 'snap', 'n', 'pos', 'radius', 'hit',
                   'world_size', 'frame_number', 'bullet_radius', 'ms', 'ms_smooth', 'ms_mean', 'pairs', 'hits',
                   'checks', 'begins', 'ends', 'rebuilt', 'method', 'mode', 'dragged', 'method_available',
                   'method_count', 'bullets', 'bullet_data', 'partition', 'partition_data'])
    W[f] = num('web_' + f, ['number']);
  W.start = num('web_start', ['string', 'number', 'number', 'number', 'number']);
  W.grab = M.cwrap('web_grab', null, ['number', 'number']);
  W.drag = M.cwrap('web_drag', null, ['number', 'number']);
  W.release = M.cwrap('web_release', null, []);
  W.fire = M.cwrap('web_fire', null, []);
  W.message = M.cwrap('web_message', 'string', []);
  W.method_name = M.cwrap('web_method_name', 'string', ['number']);
  const modes = ['auto', 'incremental', 'rebuild'];
  const statusNames = {0: 'ok', '-2': 'invalid argument', '-6': 'out of memory', '-7': 'not built'};

  // The methods this build has, in the library's order (the desktop demo's 1..6).
  const methodSel = document.getElementById('method');
  const methods = [];
  for (let m = 0; m < W.method_count(); ++m) {
    methods.push(W.method_name(m));
    const o = document.createElement('option');
    o.value = String(m);
    o.textContent = W.method_name(m) + (W.method_available(m) ? '' : ' (not built)');
    o.disabled = !W.method_available(m);
    methodSel.appendChild(o);
  }

  const scene = q.get('scene') || 'seed';
  const N_MIN = 100, N_MAX = 100000;
  const n0 = Math.max(1, Math.min(N_MAX, parseInt(q.get('n') || (scene === 'seed' ? '500' : '1000'), 10) || 500));
  const method0 = Math.max(0, methods.indexOf(q.get('method') || 'auto'));
  const mode0 = Math.max(0, modes.indexOf(q.get('mode') || 'auto'));
  const stopAt = q.has('frames') ? parseInt(q.get('frames'), 10) : -1;
  let partition = Math.max(0, Math.min(2, parseInt(q.get('partition') || '0', 10) || 0)), paused = false, snap = q.get('snap') === '1', first = true, fps = 0, last = 0;
  W.snap(snap ? 1 : 0);
  const st0 = W.start(scene, n0, method0, mode0, parseFloat(q.get('seed') || '1'));
  if (st0 !== 0) {
    hud.textContent = 'cannot start scene ' + scene + ': ' + (statusNames[st0] || st0);
    return;
  }

  const canvas = document.getElementById('stage');
  const ctx = canvas.getContext('2d', {alpha: false});
  const scale = () => canvas.width / W.world_size();
  const f64 = (ptr, len) => new Float64Array(M.HEAPF64.buffer, ptr, len);
  const f32 = (ptr, len) => new Float32Array(M.HEAPF32.buffer, ptr, len);
  const u8 = (ptr, len) => new Uint8Array(M.HEAPU8.buffer, ptr, len);

  // Colours of the desktop demo: fill and rim of isolated (white) and hit (red) circles.
  const fill = ['rgb(240,240,240)', 'rgb(235,45,45)'], rim = ['rgb(140,145,160)', 'rgb(150,20,25)'];
  const shades = ['rgba(40,200,70,0.75)', 'rgba(90,235,120,0.75)', 'rgba(30,170,150,0.75)', 'rgba(150,255,90,0.75)'];
  // Pre-drawn circles by colour and pixel radius: one drawImage per circle is far cheaper than
  // an arc per circle at 100,000 circles.
  const sprites = new Map();
  function sprite(k, rad) {
    const key = k + ':' + rad;
    let s = sprites.get(key);
    if (s || sprites.size > 256) return s;
    const m = Math.ceil(rad), c = document.createElement('canvas');
    c.width = c.height = 2 * m + 1;
    const g = c.getContext('2d');
    g.fillStyle = rim[k];
    g.beginPath();
    g.arc(m + 0.5, m + 0.5, rad, 0, 2 * Math.PI);
    g.fill();
    g.fillStyle = fill[k];
    g.beginPath();
    g.arc(m + 0.5, m + 0.5, rad - 1.25, 0, 2 * Math.PI);
    g.fill();
    s = {c, m};
    sprites.set(key, s);
    return s;
  }

  function drawCells(sc) {
    const count = W.partition(partition);
    if (!count) return;
    const c = f32(W.partition_data(), 5 * count), w = W.world_size();
    const clamp = (v) => Math.max(-w, Math.min(2 * w, v));
    for (let shade = 0; shade < 4; ++shade) {
      ctx.strokeStyle = ctx.fillStyle = shades[shade];
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (let k = 0; k < count; ++k) {
        const lo0 = c[5 * k], lo1 = c[5 * k + 1], hi0 = c[5 * k + 2], hi1 = c[5 * k + 3], level = c[5 * k + 4];
        if (Math.abs(level) % 4 !== shade || Number.isNaN(lo0 + lo1 + hi0 + hi1)) continue;
        const x0 = Math.floor(clamp(lo0) * sc), y0 = Math.floor(clamp(lo1) * sc);
        const x1 = Math.floor(clamp(hi0) * sc), y1 = Math.floor(clamp(hi1) * sc);
        const lv = Math.max(0, Math.min(4000, level));
        // An interval (flat on one axis: the sweep's) is a bar stacked by its level, as on the desktop.
        if (lo1 === hi1 && lo0 < hi0) ctx.fillRect(x0, lv * 3, x1 - x0 + 1, 2);
        else if (lo0 === hi0 && lo1 < hi1) ctx.fillRect(lv * 3, y0, 2, y1 - y0 + 1);
        else ctx.rect(x0 + 0.5, y0 + 0.5, x1 - x0, y1 - y0);
      }
      ctx.stroke();
    }
  }

  function draw() {
    const sc = scale(), n = W.n();
    ctx.fillStyle = '#181a22';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    if (partition) drawCells(sc);
    const pos = f64(W.pos(), 2 * n), r = f64(W.radius(), n), hit = u8(W.hit(), n);
    // White first, red on top, so a crowd reads as red.
    for (let pass = 0; pass < 2; ++pass) {
      ctx.fillStyle = fill[pass];
      ctx.beginPath();
      let small = false;
      for (let i = 0; i < n; ++i) {
        if (hit[i] !== pass) continue;
        const cx = pos[2 * i] * sc, cy = pos[2 * i + 1] * sc, rad = r[i] * sc;
        if (rad < 3) {
          // Too small for a rim: a square of about the circle's area (at least the centre pixel).
          const h = Math.max(0.5, rad * 0.886);
          ctx.rect(Math.min(Math.floor(cx), cx - h), Math.min(Math.floor(cy), cy - h), Math.max(1, 2 * h), Math.max(1, 2 * h));
          small = true;
          continue;
        }
        const s = sprite(pass, Math.round(rad * 4) / 4);
        if (s) ctx.drawImage(s.c, Math.floor(cx) - s.m, Math.floor(cy) - s.m);
        else {
          ctx.moveTo(cx + rad, cy);
          ctx.arc(cx, cy, rad, 0, 2 * Math.PI);
          small = true;
        }
      }
      if (small) ctx.fill();
    }
    // Bullets on top: cyan in flight, amber while they touch a circle.
    const nb = W.bullets();
    if (nb) {
      const b = f32(W.bullet_data(), 3 * nb), br = Math.max(1.5, W.bullet_radius() * sc);
      for (let touching = 0; touching < 2; ++touching) {
        ctx.fillStyle = touching ? 'rgb(255,176,40)' : 'rgb(90,205,255)';
        ctx.beginPath();
        for (let k = 0; k < nb; ++k) {
          if (b[3 * k + 2] !== touching) continue;
          ctx.moveTo(b[3 * k] * sc + br, b[3 * k + 1] * sc);
          ctx.arc(b[3 * k] * sc, b[3 * k + 1] * sc, br, 0, 2 * Math.PI);
        }
        ctx.fill();
      }
    }
  }

  const nslider = document.getElementById('nslider'), nvalue = document.getElementById('nvalue');
  let shownN = -1;
  function showHud() {
    const n = W.n(), nb = W.bullets();
    let line = 'world ' + modes[W.mode()] + '/' + methods[W.method()] + (W.rebuilt() ? '*' : '') +
      '  N ' + n + '  frame ' + W.frame_number() +
      '  bp ' + W.ms_smooth().toFixed(3) + ' ms (mean ' + W.ms_mean().toFixed(3) + ')' +
      '  checks ' + W.checks() + '  pairs ' + W.pairs() + ' +' + W.begins() + ' -' + W.ends() + '  hits ' + W.hits();
    if (nb) line += '  bullets ' + nb;
    line += '  ' + fps.toFixed(0) + ' fps' + (snap ? '  snap' : '') + (partition ? (partition === 1 ? '  cells' : '  structure') : '') + (paused ? '  paused' : '');
    hud.textContent = line;
    status.textContent = W.message();
    // The controls follow the state (keys change it too), written only when it changed, so that
    // a slider being dragged or a list being opened is left alone.
    if (n !== shownN) {
      shownN = n;
      nslider.value = String(Math.log10(Math.max(N_MIN, n)));
      nvalue.textContent = String(n);
    }
    const set = (el, prop, v) => { if (el[prop] !== v) el[prop] = v; };
    set(methodSel, 'value', String(W.method()));
    set(document.getElementById('mode'), 'value', String(W.mode()));
    set(document.getElementById('partition'), 'value', String(partition));
    set(document.getElementById('snap'), 'checked', snap);
  }

  // Frame 0 is the initial state; every later frame moves first (unless paused), as the desktop
  // demo does: the world is updated every frame, paused or not (a drag or a method change shows).
  function tick(now) {
    const move = !first && !paused && (stopAt < 0 || W.frame_number() < stopAt);
    first = false;
    const st = W.frame(move ? 1 : 0);
    if (st !== 0) status.textContent = 'update failed: ' + (statusNames[st] || st);
    if (stopAt >= 0 && W.frame_number() >= stopAt) paused = true;
    draw();
    if (last && now > last) fps = fps ? 0.9 * fps + 100 / (now - last) : 1000 / (now - last);
    last = now;
    showHud();
    requestAnimationFrame(tick);
  }

  const resize = (n) => W.resize(Math.max(N_MIN, Math.min(N_MAX, Math.round(n))));
  const setMethod = (m) => W.set_method(m);
  const cycle = (step) => {
    for (let k = 1; k <= methods.length; ++k) {
      const m = (((W.method() + step * k) % methods.length) + methods.length) % methods.length;
      if (W.method_available(m)) return setMethod(m);
    }
  };
  methodSel.addEventListener('change', () => setMethod(parseInt(methodSel.value, 10)));
  document.getElementById('mode').addEventListener('change', (e) => W.set_mode(parseInt(e.target.value, 10)));
  nslider.addEventListener('input', () => { nvalue.textContent = String(Math.round(Math.pow(10, parseFloat(nslider.value)))); });
  nslider.addEventListener('change', () => { shownN = -1; resize(Math.pow(10, parseFloat(nslider.value))); });
  document.getElementById('plus').addEventListener('click', () => resize(W.n() * 2));
  document.getElementById('minus').addEventListener('click', () => resize(W.n() / 2));
  document.getElementById('partition').addEventListener('change', (e) => { partition = parseInt(e.target.value, 10); });
  document.getElementById('snap').addEventListener('change', (e) => { snap = e.target.checked; W.snap(snap ? 1 : 0); });
  document.getElementById('pause').addEventListener('click', () => { paused = !paused; });
  document.getElementById('fire').addEventListener('click', () => W.fire());
  document.addEventListener('keydown', (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.repeat) return;
    const k = e.key;
    if (k === '+' || k === '=') resize(W.n() * 2);
    else if (k === '-') resize(W.n() / 2);
    else if (k === 'b') W.fire();
    else if (k === 'd') partition = (partition + 1) % 3;
    else if (k === 's') { snap = !snap; W.snap(snap ? 1 : 0); }
    else if (k === 'm') W.set_mode((W.mode() + 1) % 3);
    else if (k === ' ') paused = !paused;
    else if (k >= '1' && k <= '6') setMethod(k.charCodeAt(0) - 49);
    else if (k === 'Tab') cycle(e.shiftKey ? -1 : 1);
    else return;
    e.preventDefault();
  });
  // The mouse drags a circle: picked by a world point query, then moved like any other proxy.
  const toWorld = (e) => {
    const b = canvas.getBoundingClientRect(), sc = scale() * b.width / canvas.width;
    return [(e.clientX - b.left) / sc, (e.clientY - b.top) / sc];
  };
  canvas.addEventListener('pointerdown', (e) => {
    const [x, y] = toWorld(e);
    W.grab(x, y);
    W.drag(x, y);
    canvas.setPointerCapture(e.pointerId);
  });
  canvas.addEventListener('pointermove', (e) => { const [x, y] = toWorld(e); W.drag(x, y); });
  canvas.addEventListener('pointerup', () => W.release());

  // For tests and the console: the state the page shows.
  window.bpDemo = {
    frame: () => W.frame_number(), pairs: () => W.pairs(), hits: () => W.hits(), n: () => W.n(),
    method: () => methods[W.method()], cells: (kind) => W.partition(kind), msMean: () => W.ms_mean(), dragged: () => W.dragged(), bullets: () => W.bullets(),
    scale, circles: () => {
      const n = W.n();
      return {pos: Array.from(f64(W.pos(), 2 * n)), r: Array.from(f64(W.radius(), n)), hit: Array.from(u8(W.hit(), n))};
    },
  };
  requestAnimationFrame(tick);
})();
