// damii serve: the clubs and tournaments page (/clubs). A club is joined with the code its
// organizer hands out; a tournament's organizer adds agents and starts each round; each
// player opens the game of its board from here (the main page, the club's lobby). Plain
// JS, no build step; the open tournament is read again every 2 s.
"use strict";

const $ = (id) => document.getElementById(id);
const REFRESH_MS = 2000;
let clubId = new URLSearchParams(location.search).get("club");
let tournamentId = new URLSearchParams(location.search).get("tournament");
let shown = null;   // the tournament shown (from the server)

function say(text, kind = "info") {
  const m = $("message");
  m.textContent = text || "";
  m.className = text ? kind : "";
}

async function api(method, url, body) {
  const opts = { method, headers: {}, cache: "no-store" };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let resp;
  try { resp = await fetch(url, opts); } catch (e) {
    throw new Error("the server cannot be reached: " + e.message);
  }
  let data = null;
  try { data = await resp.json(); } catch (e) { data = null; }
  if (!resp.ok) throw new Error((data && data.error) || `request failed (${resp.status})`);
  return data;
}

function item(list, text, buttons) {
  const li = document.createElement("li");
  li.textContent = text + " ";
  buttons.forEach(([label, id, action]) => {
    const b = document.createElement("button");
    b.textContent = label; b.id = id;
    b.addEventListener("click", action);
    li.appendChild(b);
  });
  list.appendChild(li);
}

function row(table, cells) {
  const tr = document.createElement("tr");
  cells.forEach((cell) => {
    const td = document.createElement("td");
    if (cell instanceof Node) td.appendChild(cell); else td.textContent = cell;
    tr.appendChild(td);
  });
  $(table).querySelector("tbody").appendChild(tr);
}

function name() { return $("c-name").value.trim(); }

// ---------------------------------------------------------------- clubs
async function loadClubs() {
  const data = await api("GET", "/api/clubs");
  if (!data.kept) say("This server keeps no database: start it with damii serve --db FILE to have clubs and tournaments.", "error");
  const list = $("clubs"), select = $("t-club");
  list.innerHTML = "";
  select.querySelectorAll("option[value]:not([value=''])").forEach((o) => o.remove());
  if (!data.clubs.length) item(list, "no club yet", []);
  data.clubs.forEach((c) => {
    const role = c.organizer ? " — you organize it" : (c.you ? ` — you are ${c.you}` : "");
    item(list, `${c.name} (${c.members} member${c.members === 1 ? "" : "s"})${role}`,
      [["Open", `club-open-${c.id}`, () => openClub(c.id)]]);
    if (c.organizer) {
      const o = document.createElement("option");
      o.value = c.id; o.textContent = c.name; select.appendChild(o);
    }
  });
  if (clubId) select.value = clubId;
}

async function openClub(id) {
  clubId = id;
  history.replaceState(null, "", `/clubs?club=${id}`);
  await refresh();
}

async function showClub() {
  if (!clubId) { $("club").hidden = true; return null; }
  const c = await api("GET", `/api/clubs/${clubId}`);
  $("club").hidden = false;
  $("club-title").textContent = c.name;
  $("club-info").textContent = c.organizer
    ? `You organize this club. Its code, to hand out to the pupils: ${c.code}`
    : (c.you ? `You are a member, as ${c.you}.` : "You are not a member: join with the code the organizer gives out.");
  $("club-lobby").href = `/?club=${c.id}`;
  $("club-ladder").href = `/ladder?club=${c.id}`;
  $("club-members").textContent = "Members: " + (c.members.join(", ") || "none yet");
  if (c.organizer) $("t-club").value = c.id;
  return c;
}

async function joinClub() {
  try {
    const c = await api("POST", "/api/clubs/join", { code: $("club-code").value, name: name() || "guest" });
    say(`you joined ${c.name} as ${c.you}`);
    await openClub(c.id);
  } catch (e) { say(e.message, "error"); }
}

async function createClub() {
  try {
    const c = await api("POST", "/api/clubs", { name: $("club-name").value });
    say(`club ${c.name} made: hand out its code ${c.code}`);
    await openClub(c.id);
  } catch (e) { say(e.message, "error"); }
}

// ---------------------------------------------------------------- tournaments
async function loadTournaments() {
  const url = clubId ? `/api/tournaments?club=${clubId}` : "/api/tournaments";
  const data = await api("GET", url);
  const list = $("tournaments");
  list.innerHTML = "";
  if (!data.tournaments.length) item(list, "no tournament yet", []);
  data.tournaments.forEach((t) => {
    const rounds = t.rounds ? `round ${t.round} of ${t.rounds}` : "not started";
    item(list, `${t.name} (${t.system}, ${t.variant}, ${t.players}/${t.max_players} players, ${t.status}, ${rounds})`,
      [["Open", `t-open-${t.id}`, () => openTournament(t.id)]]);
  });
}

async function openTournament(id) {
  tournamentId = id;
  history.replaceState(null, "", `/clubs?${clubId ? `club=${clubId}&` : ""}tournament=${id}`);
  await refresh();
}

async function createTournament() {
  const body = { name: $("t-name").value, system: $("t-system").value, variant: $("t-variant").value,
    clock: $("t-clock").value, max_players: Number($("t-max").value), rated: $("t-rated").checked };
  if (body.system === "swiss") body.rounds = Number($("t-rounds").value);
  if ($("t-club").value) body.club = $("t-club").value;
  try {
    const t = await api("POST", "/api/tournaments", body);
    say(`tournament ${t.name} made: players enter it, then start its first round`);
    $("t-name").value = "";
    await openTournament(t.id);
  } catch (e) { say(e.message, "error"); }
}

async function act(url, body, done) {
  try {
    shown = await api("POST", url, body);
    say(done(shown) + (shown.status === "finished" ? `; ${shown.name} has finished` : ""));
    renderTournament();
    loadTournaments();
  } catch (e) { say(e.message, "error"); }
}

function gameLink(b) {
  if (!b.game) return "bye";
  const a = document.createElement("a");
  a.href = `/?${shown.club ? `club=${shown.club}&` : ""}game=${b.game}`;
  a.id = `t-game-${b.game}`;
  a.textContent = b.yours && b.result === null ? "Play your game" : (b.result === null ? "Watch" : "Replay");
  return a;
}

// The organizer decides a board without a result (a player who never came, a game on a real board).
function decide(b) {
  const span = document.createElement("span");
  if (!shown.organizer || b.result !== null) return span;
  [["1-0", "1-0"], ["½", "1/2-1/2"], ["0-1", "0-1"]].forEach(([label, result]) => {
    const btn = document.createElement("button");
    btn.textContent = label; btn.title = `decide this board: ${result}`;
    btn.id = `t-decide-${b.round}-${b.board}-${result.replace(/\//g, "")}`;
    btn.addEventListener("click", () => {
      if (!confirm(`Decide board ${b.board} of round ${b.round} as ${result}? Its game, if still on, is stopped.`)) return;
      act(`/api/tournaments/${shown.id}/result`, { round: b.round, board: b.board, result }, () => `board ${b.board} decided: ${result}`);
    });
    span.appendChild(btn);
  });
  return span;
}

function renderTournament() {
  const t = shown;
  if (!t) { $("tournament").hidden = true; return; }
  $("tournament").hidden = false;
  $("t-title").textContent = t.name + (t.club_name ? ` (${t.club_name})` : " (open)");
  const rounds = t.rounds ? `round ${t.round} of ${t.rounds}` : "entries open";
  $("t-info").textContent = `${t.system === "swiss" ? "Swiss" : "Round robin"}, ${t.variant}, clock ${t.clock}, ` +
    `${t.rated ? "rated" : "casual"}; ${t.status}, ${rounds}.` + (t.you ? ` You play as ${t.you}.` : "") +
    (t.organizer ? " You organize it." : "");
  $("t-join").hidden = !!t.you || t.status !== "open";
  $("t-organizer").hidden = !t.organizer || t.status === "finished";
  $("t-pdn").href = `/api/tournaments/${t.id}/pdn`;
  $("t-csv").href = `/api/tournaments/${t.id}/standings.csv`;
  $("t-entrants").textContent = "Players: " + (t.entrants.map((e) => e.kind === "agent" ? `${e.name} (agent)` : e.name).join(", ") || "none yet");
  $("t-tiebreak").textContent = t.tiebreak;
  $("t-standings").querySelector("tbody").innerHTML = "";
  t.standings.forEach((s) => row("t-standings", [String(s.rank), s.name, String(s.points), String(s.tiebreak),
    String(s.played), String(s.wins), String(s.draws), String(s.losses)]));
  $("t-boards").querySelector("tbody").innerHTML = "";
  t.boards.forEach((b) => row("t-boards", [String(b.round), String(b.board), b.white, b.black || "–",
    b.result === null ? "playing" : b.result, b.termination || "", gameLink(b), decide(b)]));
  const mine = t.boards.find((b) => b.yours && b.result === null && b.game);
  if (mine) say(`round ${mine.round}: your game is on — press "Play your game"`);
}

async function showTournament() {
  if (!tournamentId) { shown = null; renderTournament(); return; }
  const before = shown;
  shown = await api("GET", `/api/tournaments/${tournamentId}`);
  renderTournament();
  // a change of round or status (the last result came in): the list and the message too
  if (before && before.id === shown.id && (before.status !== shown.status || before.round !== shown.round)) {
    if (shown.status === "finished") say(`${shown.name} has finished: see the standings and export its games`);
    await loadTournaments();
  }
}

async function refresh() {
  try {
    await loadClubs();
    await showClub();
    await loadTournaments();
    await showTournament();
    document.body.dataset.ready = "1";
  } catch (e) { say(e.message, "error"); }
}

function fill(select, values, chosen) {
  select.innerHTML = "";
  values.forEach((v) => { const o = document.createElement("option"); o.value = v; o.textContent = v; select.appendChild(o); });
  select.value = chosen;
}

async function init() {
  $("join-club").addEventListener("click", joinClub);
  $("create-club").addEventListener("click", createClub);
  $("create-tournament").addEventListener("click", createTournament);
  $("t-join").addEventListener("click", () => act(`/api/tournaments/${tournamentId}/join`, { name: name() || "guest" },
    (t) => `you entered ${t.name} as ${t.you}`));
  $("t-add-agent").addEventListener("click", () => act(`/api/tournaments/${tournamentId}/agents`, { spec: $("t-agent").value },
    () => `${$("t-agent").value} takes a place`));
  $("t-start-round").addEventListener("click", () => act(`/api/tournaments/${tournamentId}/rounds`, undefined,
    (t) => `round ${t.round} started: the games are open`));
  try {
    const meta = await api("GET", "/api/meta");
    fill($("t-variant"), meta.variants, "damii");
    fill($("t-clock"), meta.clocks, "none");
    meta.players.filter((p) => p !== "human").forEach((s) => { const o = document.createElement("option"); o.value = s; $("t-specs").appendChild(o); });
  } catch (e) { say(e.message, "error"); }
  await refresh();
  setInterval(() => { if (tournamentId) showTournament().catch((e) => say(e.message, "error")); }, REFRESH_MS);
}

init();
