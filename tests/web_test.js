// The browser demo in a real browser (issue #19): Chromium headless, driven by playwright-core,
// loads web/ (built by scripts/build_web.sh) from a local server and checks that frames advance,
// that the pair count the page shows at frame K equals the native library's (computed by the
// caller, tests/web_test.sh), that every method shows the same count, that a screenshot shows
// each circle red or white as the narrow phase says (and some of each), and that the world API
// drives the page (a circle dragged, bullets fired).
// usage: node web_test.js PLAYWRIGHT_DIR WEB_DIR CHROMIUM SCENE N K EXPECTED_PAIRS SCREENSHOT
//        node web_test.js PLAYWRIGHT_DIR WEB_DIR CHROMIUM SCENE N K measure
//   (the second form only prints the page's mean broad-phase ms per frame over frames 0..K, as
//   `broadphase-demo --headless --frames K` prints it natively: docs/web.md's table)
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const [pwDir, webDirArg, chromiumPath, scene, nArg, kArg, expectedArg, shotPath] = process.argv.slice(2);
const webDir = path.resolve(webDirArg);
const {chromium} = require(path.resolve(pwDir, 'playwright-core'));
const K = parseInt(kArg, 10), expected = parseInt(expectedArg, 10);
let failures = 0;
function check(ok, what) {
  console.log((ok ? 'ok    ' : 'FAIL  ') + what);
  if (!ok) ++failures;
}

// A static server for the build folder (what `python3 -m http.server` does for a person).
const types = {'.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm'};
const server = http.createServer((req, res) => {
  const name = decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/+/, '') || 'index.html';
  const file = path.join(webDir, path.normalize(name));
  if (!file.startsWith(webDir + path.sep) || !fs.existsSync(file)) {
    res.writeHead(404);
    res.end();
    return;
  }
  res.writeHead(200, {'Content-Type': types[path.extname(file)] || 'application/octet-stream'});
  fs.createReadStream(file).pipe(res);
});

// PNG to RGBA (8-bit RGB or RGBA, as Chromium writes its screenshots).
function decodePng(buf) {
  let off = 8, w = 0, h = 0, ctype = 0;
  const idat = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off), type = buf.toString('ascii', off + 4, off + 8), data = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      w = data.readUInt32BE(0);
      h = data.readUInt32BE(4);
      if (data[8] !== 8 || (data[9] !== 2 && data[9] !== 6) || data[12] !== 0) throw new Error('unsupported PNG');
      ctype = data[9];
    } else if (type === 'IDAT') idat.push(data);
    off += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat)), bpp = ctype === 6 ? 4 : 3, stride = w * bpp;
  const out = Buffer.alloc(w * h * 4), prev = Buffer.alloc(stride), cur = Buffer.alloc(stride);
  for (let y = 0; y < h; ++y) {
    const f = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; ++x) {
      const a = x >= bpp ? cur[x - bpp] : 0, b = prev[x], c = x >= bpp ? prev[x - bpp] : 0;
      let p = line[x];
      if (f === 1) p += a;
      else if (f === 2) p += b;
      else if (f === 3) p += (a + b) >> 1;
      else if (f === 4) {
        const pa = Math.abs(b - c), pb = Math.abs(a - c), pc = Math.abs(a + b - 2 * c);
        p += pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
      }
      cur[x] = p & 255;
    }
    for (let x = 0; x < w; ++x) {
      for (let k = 0; k < 3; ++k) out[4 * (y * w + x) + k] = cur[bpp * x + k];
      out[4 * (y * w + x) + 3] = bpp === 4 ? cur[bpp * x + 3] : 255;
    }
    cur.copy(prev);
  }
  return {w, h, px: out};
}

(async () => {
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const base = 'http://127.0.0.1:' + server.address().port + '/';
  const browser = await chromium.launch({executablePath: chromiumPath, args: ['--no-sandbox']});
  try {
    const page = await browser.newPage({viewport: {width: 1000, height: 1000}, deviceScaleFactor: 1});
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(base + 'index.html?scene=' + scene + '&n=' + nArg + '&frames=' + K);
    await page.waitForFunction(() => window.bpDemo, null, {timeout: 20000});
    const f1 = await page.evaluate(() => window.bpDemo.frame());
    await page.waitForFunction((k) => window.bpDemo.frame() >= k, K, {timeout: expectedArg === 'measure' ? 600000 : 20000});
    if (expectedArg === 'measure') {
      const r = await page.evaluate(() => [window.bpDemo.msMean(), window.bpDemo.pairs(), window.bpDemo.frame()]);
      console.log('scene ' + scene + ' n ' + nArg + ' frames 0..' + r[2] + ' mean_bp_ms ' + r[0].toFixed(4) + ' pairs ' + r[1]);
      return;
    }
    check(f1 < K, 'frames advance: frame ' + f1 + ' at load, then ' + K);
    // The count the HUD shows, once a paused frame has drawn it.
    const shown = async () => {
      await page.waitForTimeout(100);
      const t = await page.textContent('#hud');
      const m = / pairs (\d+) /.exec(t), f = / frame (\d+) /.exec(t);
      return {pairs: m ? parseInt(m[1], 10) : -1, frame: f ? parseInt(f[1], 10) : -1, text: t};
    };
    let s = await shown();
    check(s.frame === K && s.pairs === expected, 'frame ' + K + ': the page shows ' + s.pairs + ' pairs, native ' + expected + ' (' + s.text + ')');

    const options = await page.$$eval('#method option', (os) => os.filter((o) => !o.disabled).map((o) => [o.value, o.textContent]));
    for (const [value, name] of options) {
      await page.selectOption('#method', value);
      await page.waitForFunction((nm) => window.bpDemo.method() === nm, name, {timeout: 5000});
      s = await shown();
      // The partition: the world's cells, and the method's own structure (brute force has none).
      const cells = await page.evaluate(() => [window.bpDemo.cells(1), window.bpDemo.cells(2)]);
      check(s.frame === K && s.pairs === expected && s.text.includes('/' + name) && cells[0] > 0 && (cells[1] > 0 || name === 'brute'),
        'method ' + name + ': ' + s.pairs + ' pairs at frame ' + s.frame + ', partition boxes: ' + cells[0] + ' world cells, ' + cells[1] + ' of the method');
    }

    // The screenshot: each circle's centre pixel red when the narrow phase says it touches
    // another, white when not; both present.
    const shot = await page.locator('#stage').screenshot({path: shotPath});
    const img = decodePng(shot);
    const c = await page.evaluate(() => window.bpDemo.circles());
    const sc = await page.evaluate(() => window.bpDemo.scale());
    let red = 0, white = 0, wrong = 0;
    for (let i = 0; i < c.r.length; ++i) {
      const x = Math.floor(c.pos[2 * i] * sc), y = Math.floor(c.pos[2 * i + 1] * sc);
      const p = img.px.subarray(4 * (y * img.w + x), 4 * (y * img.w + x) + 3);
      // Red: a red fill, or the rim of another red circle drawn over it (they overlap, so both red).
      const isRed = p[0] > 120 && p[1] < 90 && p[2] < 90, isWhite = p[0] > 200 && p[1] > 200 && p[2] > 200;
      if (c.hit[i] ? isRed : isWhite) c.hit[i] ? ++red : ++white;
      else if (++wrong <= 5) console.log('      circle ' + i + ' at pixel ' + x + ',' + y + ' r ' + (c.r[i] * sc).toFixed(1) + ' hit ' + c.hit[i] + ': ' + Array.from(p).join(','));
    }
    check(img.w > 100 && wrong === 0 && red > 0 && white > 0,
      'screenshot ' + img.w + 'x' + img.h + ': ' + red + ' red and ' + white + ' white circles where the narrow phase says, ' + wrong + ' not');

    // The world API: a circle grabbed (a world point query) and dragged, bullets fired.
    const box = await page.locator('#stage').boundingBox();
    const i0 = c.hit.indexOf(0) >= 0 ? c.hit.indexOf(0) : 0;
    await page.mouse.move(box.x + c.pos[2 * i0] * sc, box.y + c.pos[2 * i0 + 1] * sc);
    await page.mouse.down();
    await page.mouse.move(box.x + 30, box.y + 30, {steps: 3});
    await page.waitForTimeout(150);
    const dragged = await page.evaluate(() => window.bpDemo.dragged());
    const moved = await page.evaluate((i) => window.bpDemo.circles().pos.slice(2 * i, 2 * i + 2), i0);
    await page.mouse.up();
    check(dragged === i0 && Math.abs(moved[0] * sc - 30) < 2 && Math.abs(moved[1] * sc - 30) < 2,
      'drag: circle ' + i0 + ' held (' + dragged + '), now at pixel ' + moved.map((v) => (v * sc).toFixed(1)).join(','));
    // N through the world's batches: + doubles, - halves.
    const n0 = await page.evaluate(() => window.bpDemo.n());
    await page.click('#plus');
    const n1 = await page.evaluate(() => window.bpDemo.n());
    await page.click('#minus');
    const n2 = await page.evaluate(() => window.bpDemo.n());
    check(n1 === 2 * n0 && n2 === n0, 'N: ' + n0 + ', + ' + n1 + ', - ' + n2);
    await page.keyboard.press('b');
    await page.waitForTimeout(150);
    const bullets = await page.evaluate(() => window.bpDemo.bullets());
    check(bullets > 0, 'bullets fired: ' + bullets + ' live');
    check(errors.length === 0, 'no page errors' + (errors.length ? ': ' + errors.join('; ') : ''));
  } finally {
    await browser.close();
    server.close();
  }
  process.exit(failures ? 1 : 0);
})().catch((e) => {
  console.error('web_test.js: ' + (e && e.stack || e));
  process.exit(1);
});
