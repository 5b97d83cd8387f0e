#!/bin/sh
# web/gamekit/test/browser_load.sh: gamekit.js loads in Chromium the way a
# page loads it (an ES module over HTTP, gamekit.wasm fetched next to
# dist/gamekit.mjs through import.meta.url, not the node path) and makes
# a peer. Serves web/gamekit with python's http.server on an ephemeral
# port of 127.0.0.1 and reads the page's verdict from --dump-dom.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir "$tmp/site"
cp "$here/gamekit.js" "$tmp/site/"
cp -r "$here/dist" "$tmp/site/dist"
cat > "$tmp/site/index.html" <<'HTML'
<!doctype html><html><body><pre id="out">loading</pre>
<script type="module">
import { load, decodeMap, BUTTONS } from "./gamekit.js";
const out = document.getElementById("out");
try {
  const m = await load();
  const w = m._gk_webx_new(1, 7, 0);
  out.textContent = (w !== 0 && Object.keys(BUTTONS).length === 10 &&
    typeof decodeMap === "function") ? "gamekit-ok" : "gamekit-bad";
  m._gk_webx_free(w);
} catch (e) { out.textContent = "gamekit-error " + e; }
</script></body></html>
HTML
cd "$tmp/site"
/usr/bin/python3 -m http.server 0 --bind 127.0.0.1 > "$tmp/http.log" 2>&1 &
pid=$!
port=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
  port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$tmp/http.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.5
done
[ -n "$port" ] || { echo "http.server did not start"; exit 1; }
dom=$(timeout 60 chromium --headless --no-sandbox --disable-gpu \
  --user-data-dir="$tmp/profile" --virtual-time-budget=5000 \
  --dump-dom "http://127.0.0.1:$port/index.html" 2>/dev/null || true)
case $dom in
  *gamekit-ok*) echo "ok: gamekit.js loads in Chromium and makes a peer" ;;
  *) echo "page said: $(echo "$dom" | grep -o '<pre id="out">[^<]*')"; exit 1 ;;
esac
