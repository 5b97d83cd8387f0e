// view_page.js: the script of view.html (see there).
const out = document.getElementById('out');
try {
  const q = new URLSearchParams(location.search);
  const genre = q.get('genre');
  const mod = await import(genre === 'survivors' ? '../survivors.js'
    : '../push_puzzle.js');
  const canvas = document.getElementById('c');
  canvas.style.width = `${Number(q.get('w') || 640)}px`;
  canvas.style.height = `${Number(q.get('h') || 480)}px`;
  const res = await fetch(q.get('case'));
  if (!res.ok) throw new Error(`case: HTTP ${res.status}`);
  const dump = await res.json();
  const view = mod.createView(canvas, JSON.parse(q.get('opts') || '{}'));
  view.draw(dump.state, dump.sample || null);
  const hits = (q.get('hits') || '').split(';').filter(Boolean).map((p) => {
    const [x, y] = p.split(',').map(Number);
    const h = view.hit(x, y);
    return h ? { ...h, record: Array.from(h.record) } : null;
  });
  out.textContent = JSON.stringify({ layout: view.layout(), hits,
    colors: mod.COLORS, player_colors: mod.PLAYER_COLORS || null,
    pusher_colors: mod.PUSHER_COLORS || null });
  document.title = 'drawn';
} catch (e) {
  out.textContent = JSON.stringify({ error: String(e && e.stack || e) });
  document.title = 'error';
}
