// push_puzzle.js: draws a push-puzzle state (genres/push-puzzle) on a canvas.
//
// createView(canvas, options) -> {draw(state, sample), resize(), hit(x, y),
// layout()}; see README.md. The board comes from the state's "cells" (hex,
// one byte a cell, row-major, GK_PP_* bits) and "pusher[i].x/y".

import { int, flag, bytes, fitCanvas } from './flat.js';
import { PP } from '../gamekit/constants.js';

export const GENRE = 'push-puzzle';
export const INPUT_SIZE = PP.INPUT_SIZE; // byte 0 held directions, 1 presses

// gk_push_puzzle.h
export const { LEFT, UP, RIGHT, DOWN, UNDO, RESTART } = PP;
export const { WALL, GOAL, BOX, OUTSIDE } = PP;

export const COLORS = {
  background: '#101418',
  wall: '#6b5a4a',
  floor: '#d9d2c3',
  goalFloor: '#bfe3c9', // the whole goal cell is tinted
  goal: '#2f9e55', // the dot in a free goal's centre
  box: '#d9822b',
  boxOnGoal: '#3bb273',
  text: '#e8ecf1',
  button: '#26303a',
  solved: 'rgba(59, 178, 115, 0.85)',
};
export const PUSHER_COLORS = ['#2f6fde', '#c0392b', '#8e44ad', '#16a085',
  '#2c3e50', '#d35400', '#7f8c8d', '#b7950b'];

export const HUD_H = 28; // CSS px band on top: level, moves, buttons
const MARGIN = 8;

/** The record of one press of undo (or restart): a step's input. */
export function pressRecord(bits) {
  return Uint8Array.of(0, bits & 0x3f);
}
export const undoRecord = () => pressRecord(UNDO);
export const restartRecord = () => pressRecord(RESTART);

export const DIM_MAX = PP.DIM_MAX;
export const PUSHERS_MAX = 16; // GK_PLAYERS_MAX

/** The board of a state: {w, h, cells: Uint8Array, pushers: [{x, y}]}.
 * Sizes are bounded as the genre bounds them; cells of the wrong length
 * read as an empty board of that size (drawn as outside). */
export function board(state) {
  const dim = (path) => Math.max(0, Math.min(DIM_MAX, int(state, path)));
  const w = dim('width'), h = dim('height');
  let cells = bytes(state, 'cells');
  if (cells.length !== w * h) cells = new Uint8Array(w * h).fill(OUTSIDE);
  const pushers = [];
  const np = Math.max(0, Math.min(PUSHERS_MAX, int(state, 'pushers')));
  for (let i = 0; i < np; i++)
    pushers.push({ x: int(state, `pusher[${i}].x`), y: int(state, `pusher[${i}].y`) });
  return { w, h, cells, pushers };
}

/** Cell size and origin for a w x h board on a cw x ch CSS-pixel canvas. */
export function mapping(cw, ch, w, h) {
  const availW = cw - 2 * MARGIN, availH = ch - HUD_H - 2 * MARGIN;
  const cell = Math.max(4, Math.floor(Math.min(availW / Math.max(1, w),
    availH / Math.max(1, h), 64)));
  return { cell, ox: Math.floor((cw - cell * w) / 2),
    oy: HUD_H + MARGIN + Math.floor((availH - cell * h) / 2) };
}

export function createView(canvas, options = {}) {
  const opts = { localPlayer: 0, buttons: true, ...options };
  const ctx = canvas.getContext('2d');
  let size = fitCanvas(canvas);
  let map = { cell: 0, ox: 0, oy: 0 };
  let buttons = [];

  function drawCell(x, y, c) {
    const { cell, ox, oy } = map;
    const px = ox + x * cell, py = oy + y * cell;
    if (c & OUTSIDE) return;
    if (c & WALL) {
      ctx.fillStyle = COLORS.wall;
      ctx.fillRect(px, py, cell, cell);
      return;
    }
    ctx.fillStyle = c & GOAL ? COLORS.goalFloor : COLORS.floor;
    ctx.fillRect(px, py, cell, cell);
    const inset = Math.max(2, Math.round(cell * 0.14));
    if (c & BOX) {
      ctx.fillStyle = c & GOAL ? COLORS.boxOnGoal : COLORS.box;
      ctx.fillRect(px + inset, py + inset, cell - 2 * inset, cell - 2 * inset);
    } else if (c & GOAL) {
      ctx.fillStyle = COLORS.goal;
      const r = Math.max(2, cell * 0.16);
      ctx.beginPath();
      ctx.arc(px + cell / 2, py + cell / 2, r, 0, 2 * Math.PI);
      ctx.fill();
    }
  }

  function drawButtons() {
    buttons = [];
    let right = size.w - MARGIN;
    if (!opts.buttons) return right;
    ctx.font = '12px sans-serif';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    for (const [label, bits] of [['Restart (R)', RESTART], ['Undo (Z)', UNDO]]) {
      const w = ctx.measureText(label).width + 16;
      const b = { x: right - w, y: 3, w, h: HUD_H - 6, bits };
      right -= w + 6;
      buttons.push(b);
      ctx.fillStyle = COLORS.button;
      ctx.fillRect(b.x, b.y, b.w, b.h);
      ctx.fillStyle = COLORS.text;
      ctx.fillText(label, b.x + b.w / 2, HUD_H / 2);
    }
    ctx.textAlign = 'left';
    return right;
  }

  function drawHud(state, cells) {
    const room = drawButtons() - 2 * MARGIN;
    ctx.fillStyle = COLORS.text;
    ctx.textBaseline = 'middle';
    const level = int(state, 'level') + 1;
    let boxes = 0, onGoals = 0; // from the cells: no sample needed
    for (const c of cells) {
      if (c & BOX) boxes++;
      if ((c & (BOX | GOAL)) === (BOX | GOAL)) onGoals++;
    }
    const long = `Level ${level}   moves ${int(state, 'moves')}` +
      `   pushes ${int(state, 'pushes')}   boxes ${onGoals}/${boxes}`;
    const short = `L${level}  ${int(state, 'moves')} moves  ${onGoals}/${boxes}`;
    // the longest text that fits left of the buttons, at 14 then 11 px
    for (const [font, text] of [[14, long], [11, long], [11, short]]) {
      ctx.font = `${font}px sans-serif`;
      if (ctx.measureText(text).width <= room || text === short) {
        ctx.fillText(text, MARGIN, HUD_H / 2, Math.max(1, room));
        break;
      }
    }
  }

  function draw(state, _sample = null) {
    const b = board(state);
    map = mapping(size.w, size.h, b.w, b.h);
    ctx.setTransform(size.dpr, 0, 0, size.dpr, 0, 0);
    ctx.fillStyle = COLORS.background;
    ctx.fillRect(0, 0, size.w, size.h);
    for (let y = 0; y < b.h; y++)
      for (let x = 0; x < b.w; x++) drawCell(x, y, b.cells[y * b.w + x]);
    const { cell, ox, oy } = map;
    b.pushers.forEach((p, i) => {
      ctx.fillStyle = PUSHER_COLORS[i % PUSHER_COLORS.length];
      ctx.beginPath();
      ctx.arc(ox + (p.x + 0.5) * cell, oy + (p.y + 0.5) * cell, cell * 0.36, 0,
        2 * Math.PI);
      ctx.fill();
    });
    drawHud(state, b.cells);
    if (flag(state, 'solved')) {
      ctx.fillStyle = COLORS.solved;
      ctx.fillRect(0, size.h - 40, size.w, 40);
      ctx.fillStyle = COLORS.text;
      ctx.font = 'bold 18px sans-serif';
      ctx.textAlign = 'center';
      ctx.fillText('Solved!', size.w / 2, size.h - 20);
      ctx.textAlign = 'left';
    }
  }

  return {
    draw,
    resize() {
      size = fitCanvas(canvas);
    },
    /** A click on Undo / Restart: {press, record}; otherwise null. */
    hit(x, y) {
      const b = buttons.find((k) => x >= k.x && x < k.x + k.w && y >= k.y &&
        y < k.y + k.h);
      if (!b) return null;
      return { press: b.bits === UNDO ? 'undo' : 'restart',
        record: pressRecord(b.bits) };
    },
    /** The mapping of the last draw: cell (x, y) is at o + (x, y) * cell. */
    layout() {
      return { ...map, w: size.w, h: size.h, buttons: buttons.slice() };
    },
  };
}
