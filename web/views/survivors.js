// survivors.js: draws a survivors state (genres/survivors) on a canvas.
//
// createView(canvas, options) -> {draw(state, sample), resize(), hit(x, y),
// layout()}; see README.md for the interface every view shares. Positions
// in the state are Q16.16 world units (one unit is one "pixel" of the
// arena); they are converted to floats here, for drawing only.

import { int, flag, fx, fitCanvas } from './flat.js';
import { SV } from '../gamekit/constants.js';

export const GENRE = 'survivors';
export const INPUT_SIZE = SV.INPUT_SIZE; // move_x, move_y, buttons, pick
export const BUTTON_PAUSE = SV.BUTTON_PAUSE;

// Sizes from the genre (gk_sv_internal.h, gk_sv_enemies.c, gk_sv_weapons.c).
export const PLAYERS_MAX = SV.PLAYERS_MAX;
export const ENTITIES_MAX = SV.ENTITIES_MAX; // no list is longer
export const PLAYER_RADIUS = 12;
export const PROJ_RADIUS = 4;
export const GEM_RADIUS = 4; // drawn size only: gems have no radius
export const ENEMY_RADIUS = [8, 12, 20]; // bat, zombie, brute
const ORBIT_RADIUS = 72;
const ORB_RADIUS = 12;

export const COLORS = {
  outside: '#0b0d10',
  floor: '#1b1f24',
  border: '#3a4350',
  enemy: ['#b062ff', '#3fbf4f', '#e0443a'], // bat, zombie, brute
  projectile: '#ffe14d',
  gem: '#35d0e0',
  orb: '#a8f0ff',
  aura: 'rgba(120, 200, 255, 0.14)',
  dead: '#6b6b6b',
  outline: '#0b0d10',
  health: '#e5484d',
  xp: '#35d0e0',
  bar: '#333a44',
  panel: 'rgba(0, 0, 0, 0.6)',
  text: '#e8ecf1',
  dim: 'rgba(0, 0, 0, 0.55)',
  card: '#26303a',
};
export const PLAYER_COLORS = ['#4da3ff', '#ff9f1c', '#ff5fa2', '#f2f2f2',
  '#00e5c0', '#a0522d', '#8888ff', '#c0c000'];

// Upgrade ids (gk_survivors.h GK_SV_UP_*) and what a card says.
export const UPGRADES = ['Wand', 'Aura', 'Orbit', 'Max health +20',
  'Speed +10%', 'Magnet +16', 'Heal 30'];

// HUD layout in CSS pixels (README.md; the tests read pixels there).
export const HUD = { x: 8, y: 8, w: 236, row: 22, pad: 6, barX: 34,
  barW: 110, healthH: 7, xpH: 4 };

/** Experience the next level needs (mirrors gk__sv_xp_next). */
export function xpNext(level) {
  return 5 + 6 * (Math.max(1, level) - 1);
}

/** The input record of a pick: press choice 1..3 in the step it reaches. */
export function pickRecord(choice, moveX = 0, moveY = 0) {
  const r = new Uint8Array(INPUT_SIZE);
  r[0] = moveX & 0xff;
  r[1] = moveY & 0xff;
  r[3] = choice >= 1 && choice <= 3 ? choice : 0;
  return r;
}

/** The pending pick of player `i`, or null: {options: [id x3], timer}. */
export function pendingPick(state, i) {
  const p = `players[${i}].`;
  if (!flag(state, p + 'pick_pending')) return null;
  return {
    options: [0, 1, 2].map((k) => int(state, `${p}options[${k}]`)),
    timer: int(state, p + 'pick_timer'),
  };
}

/** One player slot from the flat state (positions still Q16.16). */
export function player(state, i) {
  const p = `players[${i}].`;
  return {
    x: int(state, p + 'x'), y: int(state, p + 'y'),
    health: int(state, p + 'health'), maxHealth: int(state, p + 'max_health', 1),
    level: int(state, p + 'level', 1), xp: int(state, p + 'xp'),
    alive: flag(state, p + 'alive'), gone: int(state, p + 'gone'),
    hurt: int(state, p + 'hurt_cd'),
    aura: int(state, p + 'weapons[1].level'),
    orbit: int(state, p + 'weapons[2].level'),
    orbitAngle: int(state, p + 'orbit_angle'),
    weapons: [0, 1, 2].map((k) => int(state, `${p}weapons[${k}].level`)),
  };
}

/**
 * The world -> CSS pixel mapping for a canvas of w x h CSS pixels.
 * camera 'arena': the whole arena, scaled to fit and centred. camera
 * 'follow': `viewUnits` world units across the smaller side (but never
 * fewer CSS px per unit than `minScale`, so a player stays readable on a
 * phone), centred on (fx, fy) (world units), clamped so the view stays
 * inside the arena on each axis the arena is larger than the view.
 */
export function mapping(w, h, opts, fx0 = 0, fy0 = 0) {
  const aw = opts.arenaWidth, ah = opts.arenaHeight;
  if (opts.camera !== 'follow') {
    const s = Math.min(w / aw, h / ah);
    return { s, ox: (w - aw * s) / 2, oy: (h - ah * s) / 2 };
  }
  const s = Math.max(Math.min(w, h) / opts.viewUnits, opts.minScale || 0);
  const clamp = (c, size, px) => {
    const half = px / 2 / s;
    if (size * s <= px) return size / 2;
    return Math.min(Math.max(c, half), size - half);
  };
  const cx = clamp(fx0, aw, w), cy = clamp(fy0, ah, h);
  return { s, ox: w / 2 - cx * s, oy: h / 2 - cy * s };
}

const DEFAULTS = { arenaWidth: 1600, arenaHeight: 1600, camera: 'arena',
  follow: 0, viewUnits: 900, minScale: 0, localPlayer: 0, mark: false,
  names: [],
  minimap: 0 };

/** A slot's label, the same everywhere (HUD, cards, marker, pages): its
 * name if it has one, else P1, P2, ... (slot 0 is P1). */
export function slotLabel(i, names = []) {
  return names[i] || `P${i + 1}`;
}

// A state's columns (gamekit.js COLUMNS: predictedState({ columns })):
// the fields `keys` of the top-level array `list` by element, if the
// state has them for at least n elements, else null (read its paths).
const COLUMNS = Symbol.for('gamekit.columns');
export function columns(state, list, keys, n) {
  const c = state[COLUMNS] && state[COLUMNS][list];
  return c && keys.every((k) => c[k] && c[k].length >= n) ? c : null;
}

// The marker of the page's own player: a ring this many CSS px outside
// its figure, and a label above it.
export const MARK = { ring: 5, color: '#ffffff', width: 3 };

export function createView(canvas, options = {}) {
  const opts = { ...DEFAULTS, ...options };
  const ctx = canvas.getContext('2d');
  let size = fitCanvas(canvas);
  let cards = []; // pick cards of the last draw: {x, y, w, h, player, pick}
  let map = mapping(size.w, size.h, opts);
  let minimap = null; // the last draw's minimap: {x, y, side, k} or null

  // Reused between draws: screen x, y per enemy, grouped by kind.
  const byKind = [[], [], []];

  // Everything numerous (enemies, gems, projectiles) is whole-pixel
  // rectangles, one colour per kind: fillRect is the cheapest fill there
  // is (no anti-aliased edges to raster); 2,000 anti-aliased arcs cost
  // several times more in a software canvas (test/bench.html).
  function rect(x, y, w, h) {
    ctx.fillRect(Math.round(x), Math.round(y), Math.max(1, Math.round(w)),
      Math.max(1, Math.round(h)));
  }

  function drawEnemies(state, n) {
    const { s, ox, oy } = map;
    for (const a of byKind) a.length = 0;
    const col = columns(state, 'enemies', ['kind', 'x', 'y'], n);
    for (let i = 0; i < n; i++) {
      const e = col ? null : `enemies[${i}].`;
      const kind = col ? col.kind[i] : int(state, e + 'kind');
      if (kind < 0 || kind > 2) continue;
      byKind[kind].push(ox + fx(col ? col.x[i] : int(state, e + 'x')) * s,
        oy + fx(col ? col.y[i] : int(state, e + 'y')) * s);
    }
    // one fillRect per enemy, one colour per kind, big under small; the
    // kinds differ in shape too: brute square, zombie tall, bat wide
    const shape = [[1, 0.45], [0.6, 1], [1, 1]]; // half width, half height
    for (const k of [2, 1, 0]) {
      const a = byKind[k];
      const r = Math.max(2, ENEMY_RADIUS[k] * s);
      const hw = r * shape[k][0], hh = r * shape[k][1];
      ctx.fillStyle = COLORS.enemy[k];
      for (let i = 0; i < a.length; i += 2) rect(a[i] - hw, a[i + 1] - hh, 2 * hw, 2 * hh);
    }
  }

  function drawDots(state, list, n, radius, color) {
    const { s, ox, oy } = map;
    const r = Math.max(1, radius * s);
    const col = columns(state, list, ['x', 'y'], n);
    ctx.fillStyle = color;
    for (let i = 0; i < n; i++) {
      const x = ox + fx(col ? col.x[i] : int(state, `${list}[${i}].x`)) * s;
      const y = oy + fx(col ? col.y[i] : int(state, `${list}[${i}].y`)) * s;
      rect(x - r, y - r, 2 * r, 2 * r);
    }
  }

  function drawPlayers(state, players, step) {
    const { s, ox, oy } = map;
    const auras = new Path2D(), orbs = new Path2D();
    for (const p of players) {
      if (!p.alive) continue;
      const x = ox + fx(p.x) * s, y = oy + fx(p.y) * s;
      if (p.aura > 0) {
        const r = (44 + 8 * (p.aura - 1)) * s;
        auras.moveTo(x + r, y);
        auras.arc(x, y, r, 0, 2 * Math.PI);
      }
      if (p.orbit > 0) {
        const n = 1 + (p.orbit >> 1), r = Math.max(2, ORB_RADIUS * s);
        for (let k = 0; k < n; k++) {
          const a = ((p.orbitAngle + (k * 65536) / n) % 65536) * (Math.PI / 32768);
          const cx = x + Math.cos(a) * ORBIT_RADIUS * s;
          const cy = y + Math.sin(a) * ORBIT_RADIUS * s;
          orbs.moveTo(cx + r, cy);
          orbs.arc(cx, cy, r, 0, 2 * Math.PI);
        }
      }
    }
    return { auras, orbs, draw() {
      ctx.fillStyle = COLORS.orb;
      ctx.fill(orbs);
      const r = Math.max(3, PLAYER_RADIUS * s);
      players.forEach((p, i) => {
        if (p.gone !== 0) return; // left or not joined: nothing to draw
        const x = ox + fx(p.x) * s, y = oy + fx(p.y) * s;
        ctx.beginPath();
        ctx.arc(x, y, r, 0, 2 * Math.PI);
        if (p.alive) {
          ctx.fillStyle = PLAYER_COLORS[i % PLAYER_COLORS.length];
          ctx.fill();
        }
        ctx.lineWidth = 2;
        ctx.strokeStyle = !p.alive ? COLORS.dead
          : p.hurt > 0 && (step >> 2) & 1 ? '#ffffff' : COLORS.outline;
        ctx.stroke();
        if (opts.mark && i === opts.localPlayer)
          mark(x, y, r, slotLabel(i, opts.names));
      });
    } };
  }

  // The page's own player: a ring around it and its label above.
  function mark(x, y, r, label) {
    ctx.beginPath();
    ctx.arc(x, y, r + MARK.ring, 0, 2 * Math.PI);
    ctx.lineWidth = MARK.width;
    ctx.strokeStyle = MARK.color;
    ctx.stroke();
    ctx.font = 'bold 12px sans-serif';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    ctx.fillStyle = MARK.color;
    ctx.fillText(`${label} (you)`, x, y - r - MARK.ring - 3);
    ctx.textAlign = 'left';
  }

  // The whole arena in the bottom-right corner, while the camera follows:
  // every player as a dot, the own one ringed, and the view's frame.
  function drawMinimap(players) {
    const side = Math.min(opts.minimap, size.w / 3, size.h / 3);
    if (side < 40) return null;
    const k = side / Math.max(opts.arenaWidth, opts.arenaHeight);
    const mx = size.w - side - 8, my = size.h - side - 8;
    ctx.fillStyle = COLORS.panel;
    ctx.fillRect(mx - 2, my - 2, side + 4, side + 4);
    ctx.fillStyle = COLORS.floor;
    ctx.fillRect(mx, my, opts.arenaWidth * k, opts.arenaHeight * k);
    const { s, ox, oy } = map;
    ctx.strokeStyle = COLORS.border;
    ctx.lineWidth = 1;
    ctx.strokeRect(mx + (-ox / s) * k, my + (-oy / s) * k, (size.w / s) * k,
      (size.h / s) * k);
    players.forEach((p, i) => {
      if (p.gone !== 0 || !p.alive) return;
      const x = mx + fx(p.x) * k, y = my + fx(p.y) * k;
      ctx.fillStyle = PLAYER_COLORS[i % PLAYER_COLORS.length];
      ctx.fillRect(Math.round(x) - 2, Math.round(y) - 2, 5, 5);
      if (opts.mark && i === opts.localPlayer) {
        ctx.strokeStyle = MARK.color;
        ctx.strokeRect(Math.round(x) - 4.5, Math.round(y) - 4.5, 9, 9);
      }
    });
    return { x: mx, y: my, side, k };
  }

  function drawHud(state, sample, players) {
    const h = HUD;
    ctx.font = '12px sans-serif';
    ctx.textBaseline = 'middle';
    const texts = players.map((p, i) => {
      const status = p.gone === 2 ? 'joining' : p.gone ? 'left'
        : p.alive ? `${p.health}/${p.maxHealth}`
        : 'dead';
      return `${slotLabel(i, opts.names)} Lv ${p.level} ${status}`;
    });
    // the panel grows to its longest row (a CROWD room's 7-digit health)
    const textX = h.barX + h.barW + 6;
    const w = texts.reduce((m, t) =>
      Math.max(m, Math.ceil(textX + ctx.measureText(t).width + h.pad)), h.w);
    ctx.fillStyle = COLORS.panel;
    ctx.fillRect(h.x, h.y, w, h.pad * 2 + h.row * players.length);
    players.forEach((p, i) => {
      const top = h.y + h.pad + i * h.row;
      const left = h.x + h.barX;
      ctx.fillStyle = PLAYER_COLORS[i % PLAYER_COLORS.length];
      ctx.fillRect(h.x + 8, top + 3, 14, 14);
      const need = int(sample || {}, `players[${i}].experience_next`,
        xpNext(p.level));
      const hp = Math.max(0, Math.min(1, p.health / Math.max(1, p.maxHealth)));
      const xp = Math.max(0, Math.min(1, p.xp / Math.max(1, need)));
      ctx.fillStyle = COLORS.bar;
      ctx.fillRect(left, top + 2, h.barW, h.healthH);
      ctx.fillRect(left, top + 12, h.barW, h.xpH);
      ctx.fillStyle = COLORS.health;
      ctx.fillRect(left, top + 2, h.barW * hp, h.healthH);
      ctx.fillStyle = COLORS.xp;
      ctx.fillRect(left, top + 12, h.barW * xp, h.xpH);
      ctx.fillStyle = COLORS.text;
      ctx.fillText(texts[i], h.x + textX, top + 9);
    });
    const secs = Math.floor(int(state, 'play_steps') / 60);
    const clock = `${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, '0')}`;
    ctx.textAlign = 'right';
    ctx.fillText(`wave ${int(state, 'wave') + 1}  kills ${int(state, 'kills')}` +
      `  ${clock}`, size.w - 10, 18);
    ctx.textAlign = 'left';
  }

  function banner(text) {
    ctx.fillStyle = COLORS.dim;
    ctx.fillRect(0, size.h / 2 - 24, size.w, 48);
    ctx.fillStyle = COLORS.text;
    ctx.font = 'bold 22px sans-serif';
    ctx.textAlign = 'center';
    ctx.fillText(text, size.w / 2, size.h / 2);
    ctx.textAlign = 'left';
  }

  function cardText(id, p) {
    const name = UPGRADES[id] || `upgrade ${id}`;
    if (id > 2 || !p) return name;
    const lv = p.weapons[id];
    return lv === 0 ? `${name} (new)` : `${name} ${lv}\u2192${Math.min(5, lv + 1)}`;
  }

  function drawPicks(state, players) {
    cards = [];
    const pending = players.map((p, i) => pendingPick(state, i));
    if (!pending.some((x) => x)) return;
    ctx.fillStyle = COLORS.dim;
    ctx.fillRect(0, 0, size.w, size.h);
    // the local player's cards; or, when watching, the first pending pick
    let who = opts.localPlayer >= 0 ? opts.localPlayer : pending.findIndex((x) => x);
    ctx.font = '13px sans-serif';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    const waiting = pending.map((x, i) => (x && i !== who
      ? slotLabel(i, opts.names) : null))
      .filter((x) => x);
    if (waiting.length) {
      ctx.fillStyle = COLORS.text;
      ctx.fillText(`${waiting.join(', ')} choosing\u2026`, size.w / 2, size.h / 2 + 80);
    }
    const mine = pending[who];
    if (!mine) {
      ctx.textAlign = 'left';
      return;
    }
    const gap = 12, cw = Math.min(180, (size.w - 4 * gap) / 3), ch = 90;
    const x0 = (size.w - 3 * cw - 2 * gap) / 2, y0 = size.h / 2 - ch / 2;
    ctx.fillStyle = COLORS.text;
    ctx.fillText(`${slotLabel(who, opts.names)}: level up! pick one ` +
      '(1, 2, 3) \u2014 ' +
      `${Math.ceil(mine.timer / 60)} s`, size.w / 2, y0 - 16);
    mine.options.forEach((id, k) => {
      const c = { x: x0 + k * (cw + gap), y: y0, w: cw, h: ch, player: who,
        pick: k + 1 };
      cards.push(c);
      ctx.fillStyle = COLORS.card;
      ctx.fillRect(c.x, c.y, c.w, c.h);
      ctx.lineWidth = 2;
      ctx.strokeStyle = PLAYER_COLORS[who % PLAYER_COLORS.length];
      ctx.strokeRect(c.x + 1, c.y + 1, c.w - 2, c.h - 2);
      ctx.fillStyle = COLORS.text;
      ctx.fillText(`${k + 1}`, c.x + c.w / 2, c.y + 22);
      ctx.fillText(cardText(id, players[who]), c.x + c.w / 2, c.y + 56);
    });
    ctx.textAlign = 'left';
  }

  /** camera (optional): {mode: 'arena' | 'follow', follow: slot} for this
   * draw, in place of the options' camera and follow. */
  function draw(state, sample = null, camera = null) {
    // counts are bounded as the genre bounds them: a bad state draws
    // wrong, never loops for long
    const count = (path) => Math.max(0, Math.min(ENTITIES_MAX, int(state, path)));
    const n = Math.max(0, Math.min(PLAYERS_MAX, int(state, 'players')));
    const players = [];
    for (let i = 0; i < n; i++) players.push(player(state, i));
    const cam = { ...opts, ...(camera ? { camera: camera.mode || opts.camera,
      follow: camera.follow ?? opts.follow } : {}) };
    const f = players[cam.follow];
    map = mapping(size.w, size.h, cam, f ? fx(f.x) : 0, f ? fx(f.y) : 0);
    const { s, ox, oy } = map;
    ctx.setTransform(size.dpr, 0, 0, size.dpr, 0, 0);
    ctx.fillStyle = COLORS.outside;
    ctx.fillRect(0, 0, size.w, size.h);
    ctx.fillStyle = COLORS.floor;
    ctx.fillRect(ox, oy, opts.arenaWidth * s, opts.arenaHeight * s);
    ctx.lineWidth = 1;
    ctx.strokeStyle = COLORS.border;
    ctx.strokeRect(ox - 0.5, oy - 0.5, opts.arenaWidth * s + 1,
      opts.arenaHeight * s + 1);
    const step = int(state, 'step');
    drawDots(state, 'gems', count('gem_count'), GEM_RADIUS, COLORS.gem);
    const pl = drawPlayers(state, players, step);
    ctx.fillStyle = COLORS.aura;
    ctx.fill(pl.auras);
    drawEnemies(state, count('enemy_count'));
    drawDots(state, 'projectiles', count('projectile_count'), PROJ_RADIUS,
      COLORS.projectile);
    pl.draw();
    drawHud(state, sample, players);
    minimap = cam.camera === 'follow' ? drawMinimap(players) : null;
    if (flag(state, 'over')) {
      const why = ['everyone fell', 'survived!', 'match ended'];
      banner(`Game over: ${why[int(state, 'over_reason')] || ''}`);
    } else if (flag(state, 'paused')) {
      banner('Paused');
    }
    drawPicks(state, players);
  }

  return {
    draw,
    resize() {
      size = fitCanvas(canvas);
    },
    /** Names by slot (index 0 is P1's) for the HUD, cards and marker. */
    setNames(names) {
      opts.names = Array.from(names || []);
    },
    /** What a click at CSS pixel (x, y) means: {player, pick} on a card. */
    hit(x, y) {
      const c = cards.find((k) => x >= k.x && x < k.x + k.w && y >= k.y &&
        y < k.y + k.h);
      return c ? { player: c.player, pick: c.pick, record: pickRecord(c.pick) }
        : null;
    },
    /** The mapping of the last draw: CSS px = o + world units * s. */
    layout() {
      return { ...map, w: size.w, h: size.h, cards: cards.slice(), minimap,
        radius: Math.max(3, PLAYER_RADIUS * map.s) };
    },
  };
}
