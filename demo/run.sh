#!/usr/bin/env bash
# make demo: the main nwdes job, end to end, on the embedded sample candidate
# (demo/sample). Everything happens in a temporary directory; nothing outside
# it is touched. Usage: demo/run.sh path/to/git-nwdes
set -euo pipefail
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/nwdes-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT

# git finds `git nwdes` as git-nwdes on PATH.
mkdir -p "$work/bin"
cp "$bin" "$work/bin/git-nwdes"
export PATH="$work/bin:$PATH"
export HOME="$work/home" GIT_CONFIG_NOSYSTEM=1 NO_COLOR=${NO_COLOR:-}
mkdir -p "$HOME"
git config --global user.name "Demo Producer"
git config --global user.email producer@example.com
git config --global init.defaultBranch main
git config --global advice.detachedHead false

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then b=$'\033[1m' n=$'\033[0m'; else b= n=; fi
step() { printf '\n%s== %s%s\n' "$b" "$*" "$n"; }
# show prints a command as a user would type it, quoting where needed.
show() {
  local out='$' a q="'"
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then out+=" $a"; else out+=" '${a//$q/$q\\$q$q}'"; fi
  done
  printf '%s\n' "$out"
}
run() { show "$@"; "$@"; }
# expect_fail runs a command that must fail, and shows its exit code.
expect_fail() {
  show "$@"
  local rc=0
  "$@" || rc=$?
  if [ "$rc" = 0 ]; then echo "demo: expected a refusal" >&2; exit 1; fi
  echo "(exit $rc)"
}

step "A candidate commit with its contract (.nwave/features/greeting.md)"
git init -q "$work/candidate"
cd "$work/candidate"
cp "$here/sample/README.md" README.md
git add -A
git commit -q -m "start the project"
base=$(git rev-parse HEAD)
cp -R "$here/sample/." .
git add -A
git commit -q -m "greet: greet the visitor by name"
run git nwdes version
run cat .nwave/features/greeting.md

step "The examiner opens a draft; gate outcomes will land in it as observations"
run git nwdes examine open --feature greeting

step "Gates: every CHECK runs on the committed tree; MET needs exit 0 and the marker"
run git nwdes gate run --feature greeting
run git nwdes gate status --feature greeting

step "The examiner's workspace: only the public prose and the declared commands"
show git nwdes examine prompt --feature greeting
git nwdes examine prompt --feature greeting | tee "$work/bundle"
W=$(sed -n 's/^WORKSPACE: //p' "$work/bundle")
run git nwdes examine read --workspace "$W"
run git nwdes examine read --workspace "$W" docs/guides/greeting.md
run git nwdes examine probe --workspace "$W" -- greet Ada
expect_fail git nwdes examine probe --workspace "$W" -- greet ../../etc/passwd

step "The examiner records what it observed and judges every expectation"
run git nwdes examine observation add --feature greeting --text "$(git nwdes examine probe --workspace "$W" -- greet Ada)"
run git nwdes examine show --feature greeting
run git nwdes examine verdict set --feature greeting --expectation E1 --verdict met --observation O1 --observation O3
run git nwdes examine verdict set --feature greeting --expectation E2 --verdict met --observation O2

step "A close with an expectation left unjudged is refused, and nothing is published"
expect_fail git nwdes examine close --feature greeting --outcome accepted --diagnostic "too early"

step "An unmet expectation: nwdes derives and publishes 'rejected' (exit 1); the close removes the workspace"
run git nwdes examine observation add --feature greeting --text "$(git nwdes examine read --workspace "$W" README.md)"
run git nwdes examine verdict set --feature greeting --expectation E3 --verdict unmet --class observation_gap --observation O4
expect_fail git nwdes examine close --feature greeting --outcome accepted --diagnostic "E3: not sure the README says enough."

step "The examiner looks again, changes one verdict and closes: accepted"
run git nwdes examine verdict set --feature greeting --expectation E3 --verdict met --observation O4
run git nwdes examine close --feature greeting --outcome accepted --diagnostic "Every expectation was judged from public behaviour."

step "verify: the mechanical verdict over the diff, from recorded evidence only"
run git nwdes verify --feature greeting --diff "$base...HEAD"

step "Reviewers read the brief with plain git"
run git log -1 --notes=nwdes

step "The pre-push hook refuses a commit without an accepted examination"
git init -q --bare "$work/remote.git"
run git remote add origin "$work/remote.git"
run git nwdes hooks install
echo "change" >> README.md
git commit -q -am "docs: unexamined change"
expect_fail git push -q origin main

step "A stale draft is caught: evidence observed at the old commit cannot accept the new one"
expect_fail git nwdes examine close --feature greeting --outcome accepted --diagnostic "still fine?"
step "…and lets an accepted one through: one git push sends its records first, then the branch"
git reset -q --hard HEAD~1
run git push origin main

step "CI: a fresh clone brings the records and re-validates them"
git clone -q "$work/remote.git" "$work/ci"
cd "$work/ci"
run git nwdes remote setup origin
run git fetch -q origin
run git nwdes fetch origin
run git nwdes fsck
run git nwdes status --json
cd "$work/candidate"

step "A swarm: two cards, a tiny scripted harness that commits, one lease each, inside the wall"
cat > "$work/worker.json" <<'JSON'
{"name": "scripted", "harness": "/bin/sh", "harness_args": ["-c", "line=$(head -n 1 \"$1\"); who=$(sed -n 's/^WHO: //p' \"$1\"); out=$(bin/greet \"$who\"); mkdir -p greetings && echo \"$out\" > greetings/$who.txt && git add greetings && git commit -q -m \"greet $who\"; printf '{\"tokens\": 42, \"turns\": 1}' > \"$NWDES_JOB_DIR/spent.json\"; printf '%s\\nDONE %s\\n' \"$line\" \"$out\" > \"$NWDES_JOB_DIR/RESULT.md\"", "sh", "{prompt}"], "model": "none", "deadline": "1m", "slots": 2}
JSON
run git nwdes swarm worker check "$work/worker.json"
head=$(git rev-parse HEAD)
for who in Ada Grace; do
  printf 'RESULT: greet-%s sha=%s\nBASE: %s\nPATHS: greetings/\nBUDGET: tokens=1000\nWHO: %s\n\nGreet %s with bin/greet, commit what it printed in greetings/, and report it.\n' "$who" "${head:0:12}" "$head" "$who" "$who" > "$work/greet-$who.md"
  run git nwdes swarm card check "$work/greet-$who.md"
  run git nwdes swarm add --card "$work/greet-$who.md"
done
run cat "$work/greet-Ada.md"
run git nwdes swarm run --worker "$work/worker.json"
run git nwdes swarm status
job=$(git nwdes swarm status --json | sed -n 's/.*"job_dir": "\(.*greet-Ada[^"]*\)".*/\1/p' | head -n 1)
run cat "$job/RESULT.md"
step "The worker's commit was harvested into this repository, under its job's ref"
head_ref=$(git nwdes swarm status --json | sed -n 's/.*"head_ref": "\(.*greet-Ada[^"]*\)".*/\1/p' | head -n 1)
run git log --stat -1 "$head_ref"
run git nwdes swarm show greet-Ada

step "Everything nwdes wrote re-validates, and git agrees"
run git nwdes fsck
run git fsck --strict --no-dangling

step "The loop, unattended: card -> head -> gates -> examine card -> outcome -> rework -> accepted -> landed"
# A fresh project whose remote judges every push (the server hook). Its
# BASE holds the contract but not bin/greet: E1 and E2 are RED there.
git init -q --bare "$work/loop-remote.git"
git -C "$work/loop-remote.git" nwdes hooks install --server >/dev/null
git -C "$work/loop-remote.git" config nwdes.defaultBranch main
git init -q "$work/loop"
cd "$work/loop"
git remote add origin "$work/loop-remote.git"
git nwdes hooks install >/dev/null
echo "# greet" > README.md
git add -A && git commit -q -m "start the project" && git push -q origin main
cp -R "$here/sample/.nwave" "$here/sample/docs" .
git add -A && git commit -q -m "greeting: the contract, before the code"
base=$(git rev-parse HEAD)
# Two scripted workers (no model, no network), each a shell step where an
# agent would think. The producer's first head adds bin/greet but leaves
# the README silent (E3); the rework, given the examiner's finding, fixes
# that. The examiner reads only the public projection (README.md, docs/).
mkdir -p "$work/pool"
cp "$here/sample/bin/greet" "$work/pool/greet"
cat > "$work/pool/producer.sh" <<'SH'
line=$(head -n 1 "$1")
if grep -q 'E3 unmet' "$1"; then
  echo 'Run `bin/greet NAME` to be greeted.' >> README.md
  git commit -q -am "README: say how to run greet" || exit 1
else
  mkdir -p bin && cp "$(dirname "$0")/greet" bin/greet
  git add bin/greet && git commit -q -m "greet: greet the visitor by name" || exit 1
fi
printf '%s\nDONE\n' "$line" > "$NWDES_JOB_DIR/RESULT.md"
SH
cat > "$work/pool/examiner.sh" <<'SH'
j=$NWDES_JOB_DIR
readme=$(tr '\n' ' ' < public/README.md)
if grep -q 'bin/greet' public/README.md; then e3='"verdict":"met"'; else e3='"verdict":"unmet","class":"product_violation"'; fi
cat > "$j/journal.jsonl" <<J
{"op":"observation add","id":"O1","text":"the guide shows greet Ada printing Hello, Ada. and greet without a name printing its usage, exit 2","public":["docs/guides/greeting.md"]}
{"op":"observation add","id":"O2","text":"README.md says: $readme","public":["README.md"]}
{"op":"verdict set","expectation":"E1","verdict":"met","observations":["O1"]}
{"op":"verdict set","expectation":"E2","verdict":"met","observations":["O1"]}
{"op":"verdict set","expectation":"E3",$e3,"observations":["O2"]}
{"op":"close","outcome":"accepted","diagnostic":"judged from the public README and guide"}
J
printf '%s\nDONE\n' "$(head -n 1 "$1")" > "$j/RESULT.md"
SH
for w in producer examiner; do
  printf '{"name": "%s", "harness": "/bin/sh", "harness_args": ["%s/pool/%s.sh", "{prompt}"], "read_roots": ["%s/pool"], "deadline": "1m"}\n' "$w" "$work" "$w" "$work" > "$work/$w.json"
done
printf 'RESULT: greet sha=%s\nBASE: %s\nFEATURE: greeting\nTEST: greeting E1\nBRANCH: main\nDEADLINE: 1m\n\nAdd bin/greet as the contract asks, and commit it.\n' "${base:0:12}" "$base" > "$work/greet.md"
run cat "$work/greet.md"
run git nwdes swarm add --card "$work/greet.md"
run git nwdes swarm run --worker "$work/producer.json" --rework --examiner "$work/examiner.json" --land origin
step "The journey, from the records; the remote's main is the accepted head, judged by its own hook"
run git nwdes swarm status
run git -C "$work/loop-remote.git" log --oneline main
run git log -1 --notes=nwdes origin/main
printf '\nThe demo ran in %s (removed on exit).\n' "$work"
