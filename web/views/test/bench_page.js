// bench_page.js: the script of bench.html (see there).
import { createView, COLORS, ENEMY_RADIUS } from '../survivors.js';

const q = new URLSearchParams(location.search);
const n = Number(q.get('n') || 2000), frames = Number(q.get('frames') || 60);
const canvas = document.getElementById('c');
canvas.style.width = '800px';
canvas.style.height = '600px';

// A state like a crowded run: players in the middle, enemies around them.
let seed = 12345;
const rnd = (k) => { seed = (seed * 1103515245 + 12345) >>> 0; return seed % k; };
const state = { players: 2, enemy_count: n, projectile_count: 0, gem_count: 0 };
for (let i = 0; i < 2; i++) {
  Object.assign(state, { [`players[${i}].x`]: (780 + 40 * i) * 65536,
    [`players[${i}].y`]: 800 * 65536, [`players[${i}].alive`]: true,
    [`players[${i}].gone`]: 0, [`players[${i}].health`]: 100,
    [`players[${i}].max_health`]: 100, [`players[${i}].level`]: 1 });
}
for (let i = 0; i < n; i++) {
  state[`enemies[${i}].x`] = (200 + rnd(1200)) * 65536;
  state[`enemies[${i}].y`] = (200 + rnd(1200)) * 65536;
  state[`enemies[${i}].kind`] = rnd(3);
}

// a CPU-backed canvas from the start: the readbacks below would otherwise
// move an accelerated one to the CPU halfway through, timing two modes
const ctx = canvas.getContext('2d', { willReadFrequently: true });
const median = (a) => a.sort((x, y) => x - y)[a.length >> 1];
// Each variant is timed in 4 rounds of frames/4, the rounds interleaved
// (so a busy moment of the machine hits every variant); the median frame.
const variants = [];
function time(fn) {
  const v = { fn, t: [] };
  variants.push(v);
  return v;
}
function run() {
  for (let round = 0; round < 4; round++) {
    for (const v of variants) {
      for (let f = 0; f < frames / 4; f++) {
        const t0 = performance.now();
        v.fn();
        ctx.getImageData(0, 0, 1, 1); // wait for the raster, not the calls
        v.t.push(performance.now() - t0);
      }
    }
  }
}

const view = createView(canvas);
const batched = time(() => view.draw(state));
const empty = { ...state, enemy_count: 0 };
const none = time(() => view.draw(empty));
const floorOnly = time(() => { ctx.fillStyle = '#123'; ctx.fillRect(0, 0, 800, 600); });
// the unbatched way: one arc path and one fill per enemy, same sizes
const s = 600 / 1600, ox = 100;
const single = time(() => {
  ctx.fillStyle = COLORS.floor;
  ctx.fillRect(0, 0, 800, 600);
  for (let i = 0; i < n; i++) {
    const k = state[`enemies[${i}].kind`];
    const x = ox + (state[`enemies[${i}].x`] / 65536) * s;
    const y = (state[`enemies[${i}].y`] / 65536) * s;
    ctx.fillStyle = COLORS.enemy[k];
    ctx.beginPath();
    ctx.arc(x, y, Math.max(2, ENEMY_RADIUS[k] * s), 0, 2 * Math.PI);
    ctx.fill();
  }
});
// one arc path per kind, one fill per kind: batched paths
const paths = time(() => {
  ctx.fillStyle = COLORS.floor;
  ctx.fillRect(0, 0, 800, 600);
  for (let k = 0; k < 3; k++) {
    ctx.beginPath();
    for (let i = 0; i < n; i++) {
      if (state[`enemies[${i}].kind`] !== k) continue;
      const x = ox + (state[`enemies[${i}].x`] / 65536) * s;
      const y = (state[`enemies[${i}].y`] / 65536) * s;
      const r = Math.max(2, ENEMY_RADIUS[k] * s);
      ctx.moveTo(x + r, y);
      ctx.arc(x, y, r, 0, 2 * Math.PI);
    }
    ctx.fillStyle = COLORS.enemy[k];
    ctx.fill();
  }
});
run();
const ms = (v) => +median(v.t).toFixed(3);
document.getElementById('out').textContent = JSON.stringify({ enemies: n,
  frames, view_ms: ms(batched), view_no_enemies_ms: ms(none),
  per_enemy_arc_ms: ms(single),
  arc_path_per_kind_ms: ms(paths), fill_only_ms: ms(floorOnly) });
document.title = 'done';
