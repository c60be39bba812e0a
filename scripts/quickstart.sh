# Helpers of the quick starts and walk-throughs (README.md, docs/*.md). Source it in each new
# terminal, from the checkout:   . scripts/quickstart.sh
#
#   $SB              the service's base URL: http://127.0.0.1:${PORT:-3000} (set PORT to move it)
#   $QS              a directory for the files the walk-throughs write: ./data/quickstart (git ignores data/)
#   json FIELD       print FIELD of the JSON answer on stdin; fail loudly, showing the answer, when it is not there
#   sandbox_url TYPE base URL of TYPE's simulator in the running sandbox (`npx switchboard sandbox`)
#   sb_token ORG     an application of organization ORG and an access token: sets CLIENT_ID, CLIENT_SECRET, TOKEN
export SB="${SB:-http://127.0.0.1:${PORT:-3000}}"
export QS="${QS:-$PWD/data/quickstart}"
mkdir -p "$QS"

json() {
  node -e 'const f = process.argv[1]; const t = require("fs").readFileSync(0, "utf8"); let v; try { v = JSON.parse(t)[f]; } catch {} if (v === undefined || v === null) { console.error(`no "${f}" in: ${t.slice(0, 500)}`); process.exit(1); } console.log(v);' "$1"
}

sandbox_url() {
  node -e '
    const fs = require("fs"), path = require("path"), type = process.argv[1];
    const dir = process.env.SWITCHBOARD_DATA_DIR || "data";
    const alive = (pid) => { try { process.kill(pid, 0); return true; } catch (e) { return e.code === "EPERM"; } };
    const states = (fs.existsSync(dir) ? fs.readdirSync(dir) : []).filter((f) => /^sandbox-\d+\.json$/.test(f))
      .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"))).filter((s) => s.pid > 0 && alive(s.pid) && s.connectors[type]);
    const s = states.find((x) => x.kind !== "service") ?? states[0];
    if (!s) { console.error(`no running sandbox with a ${type} simulator in ${dir}: start one with npx switchboard sandbox`); process.exit(1); }
    console.log(s.connectors[type].base_url);' "$1"
}

sb_token() {
  local app
  app=$(npx switchboard admin create-app --org "$1")
  CLIENT_ID=$(echo "$app" | json client_id)
  CLIENT_SECRET=$(echo "$app" | json client_secret)
  TOKEN=$(curl -sS --fail-with-body "$SB/api/v1/account/applications/token" -H 'content-type: application/json' \
    -d "{\"client_id\":\"$CLIENT_ID\",\"client_secret\":\"$CLIENT_SECRET\"}" | json access_token)
}
