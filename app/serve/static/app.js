// damii serve: the page. Plain JS and SVG, no build step, no external assets.
"use strict";

const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";
const COLOURS = ["white", "black"];
const Name = { white: "White", black: "Black" };

let meta = null;
let game = null;          // state of the current game (from the server)
let gameWS = null;
let sel = [];             // path chosen so far (hop by hop)
let flipped = false;
let clockAt = 0;          // when game.clock.remaining was received (ms)
let mySides = null;       // lobby games: the colours this browser plays ([] watching); null: all people here
const HEARTBEAT_MS = 1500;
const PING_MS = 2000;     // how often the page asks whether the server is up (no game websocket open)
let currentTab = "play";
const messages = {};      // tab -> [text, kind]: each tab keeps its own status line
let lobbySpecs = null;    // the New-game White/Black fields, kept while they show a lobby game's players
const lobbyClub = new URLSearchParams(location.search).get("club");   // /?club=ID: that club's lobby only

// ---------------------------------------------------------------- messages and requests
function say(text, kind = "info", tab = currentTab) {
  messages[tab] = [text || "", kind];
  if (tab === currentTab) showMessage();
}

function showMessage() {
  const [text, kind] = messages[currentTab] || ["", ""];
  const m = $("message");
  m.textContent = text;
  m.className = text ? kind : "";
}

// ---------------------------------------------------------------- is the server there?
let serverUp = true;

function setServerUp(up) {
  if (up === serverUp) return;
  serverUp = up;
  $("offline").hidden = up;
  document.body.dataset.server = up ? "up" : "down";
  updateConnections();
}

async function checkServer() {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), PING_MS);
  try {
    const resp = await fetch("/api/ping", { signal: ctrl.signal, cache: "no-store" });
    setServerUp(resp.ok);
  } catch (e) {
    setServerUp(false);
  } finally {
    clearTimeout(timer);
  }
}

setInterval(() => {   // a game's open websocket tells at once; without one, ask
  if (!(gameWS && gameWS.readyState === 1) || !serverUp) checkServer();
}, PING_MS);

async function api(method, url, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(url, opts);
  } catch (e) {
    throw new Error("the server cannot be reached: " + e.message);
  }
  let data = null;
  try { data = await resp.json(); } catch (e) { data = null; }
  if (!resp.ok) throw new Error((data && data.error) || `request failed (${resp.status})`);
  return data;
}

function el(tag, attrs, parent, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// ---------------------------------------------------------------- the board
// opts: flip, movable (Set), targets (Set), marked (Set), captured (Set), onClick(square)
function drawBoard(svg, layout, pos, opts = {}) {
  const n = layout.size, cell = 60, size = n * cell;
  svg.setAttribute("viewBox", `0 0 ${size} ${size}`);
  svg.dataset.variant = layout.variant;
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const xy = (r, c) => opts.flip ? [(n - 1 - c) * cell, (n - 1 - r) * cell] : [c * cell, r * cell];
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) {
    const [x, y] = xy(r, c);
    el("rect", { x, y, width: cell, height: cell, fill: "#f0d9b5" }, svg);
  }
  const marked = opts.marked || new Set(), targets = opts.targets || new Set();
  const movable = opts.movable || new Set(), captured = opts.captured || new Set();
  layout.squares.forEach(([r, c], i) => {
    const sq = i + 1, [x, y] = xy(r, c);
    const fill = marked.has(sq) ? "#c9ae45" : "#b07e56";
    el("rect", { x, y, width: cell, height: cell, fill, "data-square": sq, class: "dark" }, svg);
  });
  layout.squares.forEach(([r, c], i) => {
    const sq = i + 1, [x, y] = xy(r, c), p = pos.board[i];
    const cx = x + cell / 2, cy = y + cell / 2;
    if (p !== 0) {
      const white = p > 0;
      // the "can move" ring hugs the piece, clear of the corners' number and operation
      if (movable.has(sq)) el("circle", { cx, cy, r: cell * 0.4, fill: "none", stroke: "#2fa84f", "stroke-width": 2, class: "movable", "data-square": sq }, svg);
      el("circle", { cx, cy, r: cell * 0.36, fill: white ? "#faf8f0" : "#262424",
        stroke: white ? "#463e37" : "#080808", "stroke-width": 2, class: "piece",
        "data-piece": white ? (Math.abs(p) === 2 ? "W" : "w") : (Math.abs(p) === 2 ? "B" : "b") }, svg);
      el("circle", { cx, cy, r: cell * 0.25, fill: "none", stroke: white ? "#cdc6b9" : "#605c5a", "stroke-width": 2 }, svg);
      if (Math.abs(p) === 2) {
        el("path", { d: `M${cx - 13} ${cy + 7} L${cx - 13} ${cy - 6} L${cx - 6} ${cy} L${cx} ${cy - 10} L${cx + 6} ${cy} L${cx + 13} ${cy - 6} L${cx + 13} ${cy + 7} Z`,
          fill: "#e8b224", stroke: "#784e00", "stroke-width": 1.5 }, svg);
      }
      if (layout.scoring && pos.chips && pos.chips[i] !== null) {
        el("text", { x: cx, y: cy + (Math.abs(p) === 2 ? 20 : 5), "text-anchor": "middle", class: "chip",
          fill: white ? "#111" : "#f4f4f4" }, svg, pos.chips[i]);
      }
      if (captured.has(sq)) {
        el("path", { d: `M${cx - 14} ${cy - 14} L${cx + 14} ${cy + 14} M${cx + 14} ${cy - 14} L${cx - 14} ${cy + 14}`,
          stroke: "#d71e1e", "stroke-width": 5 }, svg);
      }
    }
    if (targets.has(sq)) el("circle", { cx, cy, r: 9, fill: "#2fa84f", opacity: 0.85, class: "target" }, svg);
  });
  layout.squares.forEach(([r, c], i) => {   // square numbers and operations in the corners, on top
    const sq = i + 1, [x, y] = xy(r, c);
    el("text", { x: x + 1.5, y: y + 8.5, class: "sq-num", "data-square": sq }, svg, String(sq));
    if (!layout.scoring) return;
    const op = layout.ops[i] === "x" ? "×" : (layout.ops[i] === "/" ? "÷" : layout.ops[i]);
    if (pos.board[i] === 0) el("text", { x: x + cell / 2, y: y + cell / 2 + 7, "text-anchor": "middle", class: "op big", "data-square": sq }, svg, op);
    else el("text", { x: x + cell - 1.5, y: y + cell - 2, "text-anchor": "end", class: "op", "data-square": sq }, svg, op);
  });
  if (opts.onClick) {
    layout.squares.forEach(([r, c], i) => {
      const sq = i + 1, [x, y] = xy(r, c);
      const hit = el("rect", { x, y, width: cell, height: cell, class: "hit", id: `${svg.id}-sq-${sq}`, "data-square": sq }, svg);
      hit.addEventListener("click", () => opts.onClick(sq));
    });
  }
}

// Sci-Damath's scores: a small table, the points so far and what they come to with the chips left
function showScores(view, layout, pos) {
  view.textContent = "";
  if (!layout.scoring || !pos.scores) return;
  const minus = (v) => String(v).replace(/^-/, "−");
  const table = document.createElement("table");
  const rows = [["", "White", "Black"], ["Score", ...pos.scores.map(minus)],
    ["With the chips left", ...pos.totals.map(minus)]];
  rows.forEach((cells, r) => {
    const tr = document.createElement("tr");
    cells.forEach((text, c) => {
      const td = document.createElement(r === 0 || c === 0 ? "th" : "td");
      td.textContent = text;
      tr.appendChild(td);
    });
    table.appendChild(tr);
  });
  const caption = document.createElement("caption");
  caption.textContent = "At the end each side adds the values of its chips left on the board (a dama's twice).";
  table.appendChild(caption);
  view.appendChild(table);
}

// Sci-Damath's score sheet as a player keeps it: each move, each capture's operation and
// points, the running scores; a dama's chip circled (rule 15), a forced move marked
function showSheet() {
  const wrap = $("sheet-wrap"), rows = game.sheet || [];
  wrap.hidden = !game.layout.scoring;
  if (wrap.hidden) return;
  const minus = (v) => String(v).replace(/^-/, "−");
  const sym = { "x": "×", "/": "÷", "+": "+", "-": "−" };
  const table = document.createElement("table");
  const add = (cells, cls) => {
    const tr = document.createElement("tr");
    if (cls) tr.className = cls;
    cells.forEach(([text, kind, span]) => {
      const td = document.createElement(cls === "head" ? "th" : "td");
      if (text instanceof Node) td.appendChild(text); else td.textContent = text;
      if (kind) td.className = kind;
      if (span) td.colSpan = span;
      tr.appendChild(td);
    });
    table.appendChild(tr);
  };
  add([["#"], [""], ["Move"], ["(x, y)"], ["Chip"], ["Operation"], ["Points"], ["White"], ["Black"]], "head");
  rows.forEach((r) => {
    const chip = document.createElement("span");
    chip.textContent = minus(r.chip);
    if (r.dama || r.crowned) { chip.className = "dama"; chip.title = r.dama ? "a dama" : "becomes a dama"; }
    const ops = r.jumps.map((j) => `${minus(j.taker)} ${sym[j.op]} ${minus(j.taken)}` + (j.multiplier > 1 ? ` ×${j.multiplier}` : "") + ` = ${minus(j.points)}`).join("; ");
    add([[String(r.number)], [Name[r.side], "text"], [r.move + (r.forced ? " (forced)" : ""), "text"], [r.xy, "text nowrap"],
      [chip], [ops, "text"], [r.points === null ? "" : minus(r.points)], [minus(r.scores[0])], [minus(r.scores[1])]],
    r.forced ? "forced" : "");
  });
  if (game.position.totals) add([["Totals with the chips left (damas doubled)", "text", 7], [minus(game.position.totals[0])], [minus(game.position.totals[1])]], "totals");
  const view = $("sheet");
  view.textContent = "";
  view.appendChild(table);
  view.scrollTop = view.scrollHeight;
}

// The classroom match: the game's time left, the warnings, touch move
function updateMatch() {
  const view = $("match-view"), m = game && game.match;
  view.hidden = !m;
  if (!m) return;
  const paused = game.over || game.open;
  const left = Math.max(0, (m.game_left || 0) - (paused ? 0 : (Date.now() - clockAt) / 1000));
  const clock = `${Math.floor(left / 60)}:${String(Math.floor(left % 60)).padStart(2, "0")}`;
  const warnings = m.violations.map((v, i) => `${Name[COLOURS[i]]} ${v}`).join(", ");
  view.textContent = `Sci-Damath match: game time left ${clock} · warnings ${warnings} (the ${m.disqualified_at}th disqualifies)` +
    (m.touch_move ? " · touch move" + (m.touched ? `: the chip on ${m.touched} must move` : "") : "");
  view.className = m.violations.some((v) => v > 0) ? "match-view warned" : "match-view";
}

function touchedChip() {
  return game && game.match && game.match.touch_move ? game.match.touched : null;
}

// Touch move: a chip selected is reported to the server, which holds the player to it
async function touchChip(sq) {
  if (!(game.match && game.match.touch_move)) return true;
  try {
    setGame(await api("POST", `/api/games/${game.id}/touch`, { square: sq }));
    return true;
  } catch (e) { say(e.message, "error", "play"); return false; }
}

// ---------------------------------------------------------------- playing
function mine(side) {
  return game.seats[side].human && (mySides === null || mySides.includes(side));
}

function humanToMove() {
  return game && !game.over && !game.open && mine(game.position.turn);
}

function candidates() {
  return game.position.legal.filter((m) => sel.every((s, k) => m.path[k] === s));
}

function renderGame() {
  if (!game) return;
  const pos = game.position, layout = game.layout;
  let shown = pos, marked = new Set(), targets = new Set(), movable = new Set(), captured = new Set();
  if (humanToMove() && sel.length === 0 && touchedChip() !== null) sel = [touchedChip()];
  if (humanToMove()) {
    if (sel.length === 0) {
      pos.legal.forEach((m) => movable.add(m.path[0]));
    } else {
      const cands = candidates();
      cands.forEach((m) => { if (m.path.length > sel.length) targets.add(m.path[sel.length]); });
      sel.forEach((s) => marked.add(s));
      if (sel.length > 1) {          // show the piece where it has got to, hop by hop
        const board = pos.board.slice(), chips = pos.chips ? pos.chips.slice() : null;
        const from = sel[0] - 1, to = sel[sel.length - 1] - 1;
        board[to] = board[from]; if (to !== from) board[from] = 0;
        if (chips) { chips[to] = chips[from]; if (to !== from) chips[from] = null; }
        shown = Object.assign({}, pos, { board, chips });
        cands[0].captured.slice(0, sel.length - 1).forEach((s) => captured.add(s));
      }
    }
  }
  if (sel.length === 0 && pos.last) pos.last.forEach((s) => marked.add(s));
  drawBoard($("play-board"), layout, shown, { flip: flipped, marked, targets, movable, captured, onClick: clickSquare });
  const atOneScreen = !game.lobby && game.seats.every((s) => s.human);
  const seats = atOneScreen ? [Name.white, Name.black] : game.seats.map((s, i) => `${Name[COLOURS[i]]}: ${game.lobby ? s.label + (mine(i) ? " (you)" : "") : (s.human ? "you" : s.label)}`);
  $("seats").textContent = seats.join(" — ") + `  (${atOneScreen ? "two players at this screen, " : ""}${layout.variant}, ${layout.orientation}${game.casual ? ", casual" : ", rated"})`;
  let status;
  if (game.over) status = `Game over: ${game.result} (${game.termination})`;
  else if (game.open) status = "Waiting for a second player to join from the lobby";
  else if (game.thinking) status = `${Name[COLOURS[pos.turn]]} (${game.seats[pos.turn].label}) is thinking…`;
  else status = `${Name[COLOURS[pos.turn]]} to move` + (sel.length > 1 ? " — go on capturing" : "");
  $("status").textContent = status;
  showScores($("scores"), layout, pos);
  showSheet();
  $("pdn").textContent = game.pdn;
  const live = !game.over;
  const offerTo = game.draw_offer ? 1 - COLOURS.indexOf(game.draw_offer) : null;
  const canAnswer = live && offerTo !== null && mine(offerTo);
  const playsHere = [0, 1].some((i) => mine(i)) && !game.open;
  $("resign").disabled = !live || !playsHere;
  $("offer-draw").disabled = !live || !playsHere || game.draw_offer !== null || !game.draws;
  $("offer-draw").title = game.draws ? "" : "no draw offers in blitz: draws by agreement are for standard matches";
  $("claim-draw").hidden = !(live && playsHere && game.claim);
  $("accept-draw").hidden = !canAnswer;
  $("decline-draw").hidden = !canAnswer;
  $("takeback").disabled = game.lobby || !game.casual || !!game.match || game.moves.length === 0 || (game.over && !["no legal move", "threefold repetition", "no-progress rule", "turn limit"].includes(game.termination));
  const dl = $("download");
  dl.href = `/api/games/${game.id}/pdn`;
  dl.classList.remove("disabled");
  $("download-sheet").hidden = !layout.scoring;
  $("download-sheet").href = `/api/games/${game.id}/sheet`;
  if (canAnswer && game.message) say(game.message + " — accept or decline", "info", "play");
  updateClock();
}

function updateConnections() {
  const view = $("connections");
  if (!game || !game.lobby || !game.connections || game.over) { view.textContent = ""; return; }
  if (!serverUp) { view.textContent = "no news from the server: the players' connections are unknown"; view.className = "clock-view low"; return; }
  const since = (Date.now() - clockAt) / 1000;
  view.textContent = game.connections.map((c, i) => {
    if (c.connected) return `${game.seats[i].label}: connected`;
    return `${game.seats[i].label}: lost the connection — ${Math.max(0, c.grace_left - since).toFixed(0)} s to come back`;
  }).join(" · ");
  view.className = game.connections.some((c) => !c.connected) ? "clock-view low" : "clock-view";
}

function updateClock() {
  updateConnections();
  updateMatch();
  const view = $("clock-view");
  if (!game || game.clock.seconds === null) { view.textContent = game ? "No clock" : ""; view.className = "clock-view"; return; }
  if (game.over) { view.textContent = `Clock: ${game.clock.name}`; view.className = "clock-view"; return; }
  if (game.clock.exempt) { view.textContent = `Clock: ${game.clock.name} — a capture may take any time`; view.className = "clock-view"; return; }
  const left = Math.max(0, game.clock.remaining - (Date.now() - clockAt) / 1000);
  if (game.match) {
    view.textContent = `${Name[COLOURS[game.position.turn]]}'s move: ${left.toFixed(1)} s left (at 0 a warning, and the arbiter moves)`;
    view.className = left < 10 ? "clock-view low" : "clock-view";
    return;
  }
  view.textContent = `${Name[COLOURS[game.position.turn]]}'s clock: ${left.toFixed(1)} s (${game.clock.name})`;
  view.className = left < 5 ? "clock-view low" : "clock-view";
}
setInterval(updateClock, 200);

function setGame(state) {
  if (game && state.id === game.id && state.version < game.version) return;
  const changed = !game || state.id !== game.id || state.version !== game.version;
  game = state;
  clockAt = Date.now();
  if (changed) sel = [];
  renderGame();
  const alarm = /^warning \d|disqualified/.test(game.message || "");
  if (changed && game.message && !(game.draw_offer)) say(game.message, alarm ? "error" : "info", "play");
  showLobbySeats();
}

// While a lobby game is on, the New-game row's White and Black show its players (greyed);
// the specs typed there come back when it ends or when New game is pressed.
function showLobbySeats() {
  const inLobby = !!(game && game.lobby && !game.over);
  if (inLobby) {
    if (!lobbySpecs) lobbySpecs = [$("white").value, $("black").value, $("casual").checked];
    $("white").value = game.seats[0].label;
    $("black").value = game.open ? "waiting for a player" : game.seats[1].label;
    $("casual").checked = !!game.casual;   // the game's own setting (a rated one: unticked)
  } else if (lobbySpecs) {
    restoreSpecs();
  }
  $("white").disabled = $("black").disabled = $("casual").disabled = inLobby;
}

function restoreSpecs() {
  if (!lobbySpecs) return;
  [$("white").value, $("black").value, $("casual").checked] = lobbySpecs;
  lobbySpecs = null;
  $("white").disabled = $("black").disabled = $("casual").disabled = false;
}

setInterval(() => {   // heartbeats: this browser is still here
  if (game && game.lobby && !game.over && gameWS && gameWS.readyState === 1) gameWS.send("heartbeat");
}, HEARTBEAT_MS);

async function openLobbyGame(ev) {
  ev.preventDefault();
  try {
    const state = await api("POST", "/api/lobby", { name: $("name").value.trim() || "guest",
      variant: $("variant").value, clock: $("clock").value, casual: $("casual").checked,
      ...(lobbyClub ? { club: lobbyClub } : {}) });
    mySides = [0]; flipped = false; game = null;
    setGame(state);
    say((state.message ? state.message + "; " : "game opened: ") + "a second browser joins it from the lobby", "info", "play");
    connectGame(state.id);
  } catch (e) { say(e.message, "error", "play"); }
}

async function showLobby() {
  let data;
  try { data = await api("GET", "/api/lobby" + (lobbyClub ? `?club=${encodeURIComponent(lobbyClub)}` : "")); } catch (e) { say(e.message, "error", "play"); return; }
  const list = $("lobby");
  list.innerHTML = "";
  if (!data.games.length) { const li = document.createElement("li"); li.textContent = "no lobby games now"; list.appendChild(li); }
  data.games.forEach((g) => {
    const li = document.createElement("li");
    const clock = g.clock === "none" ? "no clock" : `clock ${g.clock}`;
    li.textContent = `${g.white} – ${g.black} (${g.variant}, ${clock}, ${g.rated ? "rated" : "casual"}) `;
    const b = document.createElement("button");
    const kind = g.you.length ? "resume" : (g.open ? "join" : "watch");
    b.textContent = { resume: "Resume", join: "Join", watch: "Watch" }[kind];
    b.id = `lobby-${kind}-${g.id}`;
    b.addEventListener("click", () => (kind === "join" ? joinGame(g.id) : watchGame(g.id, g.you)));
    li.appendChild(b);
    list.appendChild(li);
  });
}

async function joinGame(id) {
  try {
    const state = await api("POST", `/api/lobby/${id}/join`, { name: $("name").value.trim() || "guest" });
    mySides = [1]; flipped = true; game = null;  // the open seat is Black
    setGame(state);
    connectGame(id);
  } catch (e) { say(e.message, "error", "play"); }
}

async function watchGame(id, sides = []) {
  try {
    const state = await api("GET", `/api/games/${id}`);
    mySides = sides; game = null; flipped = sides.length === 1 && sides[0] === 1;
    setGame(state);
    say(sides.length ? "back in your game" : "watching: only the players move", "info", "play");
    connectGame(id);
  } catch (e) { say(e.message, "error", "play"); }
}

function connectGame(id) {
  if (gameWS) { gameWS.onclose = null; gameWS.close(); }
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${proto}://${location.host}/api/games/${id}/ws`);
  ws.onopen = () => setServerUp(true);
  ws.onmessage = (ev) => { const s = JSON.parse(ev.data); if (game && s.id === game.id) setGame(s); };
  ws.onclose = () => {
    if (ws !== gameWS) return;
    checkServer();   // a stopped server shows at once, not at the next click
    if (game && game.id === id && !game.over) setTimeout(() => connectGame(id), 1000);
  };
  gameWS = ws;
}

async function clickSquare(sq) {
  if (!humanToMove()) return;
  const legal = game.position.legal;
  if (sel.length === 0) {
    if (legal.some((m) => m.path[0] === sq)) { if (!(await touchChip(sq))) return; sel = [sq]; renderGame(); }
    else if (game.position.board[sq - 1] !== 0) say(`the piece on ${sq} has no legal move` + (legal.some((m) => m.captured.length) ? " (a capture is compulsory)" : ""), "error", "play");
    return;
  }
  const next = candidates().filter((m) => m.path[sel.length] === sq);
  if (next.length === 0) {
    const other = sel.length === 1 && sq !== sel[0] && legal.some((m) => m.path[0] === sq);
    if (other && touchedChip() !== null) { say(`touch move: the chip on ${touchedChip()} was touched and must move`, "error", "play"); return; }
    if (other && !(await touchChip(sq))) return;
    sel = other ? [sq] : [];
    renderGame();
    return;
  }
  sel.push(sq);
  const done = next.find((m) => m.path.length === sel.length);
  if (done && next.length === 1) {
    sel = [];
    await send("move", { move: done.text });
  } else {
    renderGame();
  }
}

async function send(action, body) {
  if (!game) return;
  try {
    setGame(await api("POST", `/api/games/${game.id}/${action}`, body || {}));
  } catch (e) {
    say(e.message, "error", "play");
    sel = [];
    renderGame();
  }
}

async function newGame(ev) {
  ev.preventDefault();
  restoreSpecs();
  const body = { variant: $("variant").value, white: $("white").value, black: $("black").value,
    clock: $("clock").value, casual: $("casual").checked };
  if ($("fen").value.trim()) body.fen = $("fen").value.trim();
  say("starting…", "info", "play");
  try {
    const state = await api("POST", "/api/games", body);
    mySides = null;
    flipped = !state.seats[0].human && state.seats[1].human;
    game = null;
    setGame(state);
    say(`new game: ${state.seats[0].label} (White) against ${state.seats[1].label} (Black)`, "info", "play");
    connectGame(state.id);
  } catch (e) { say(e.message, "error", "play"); }
}

// ---------------------------------------------------------------- replay
let replayData = null, replayPly = 0, replayTimer = null;

async function loadReplay(index = 0) {
  const text = $("replay-text").value;
  if (!text.trim()) { say("choose a PDN file or paste PDN text first", "error", "replay"); return; }
  stopReplay();
  try {
    replayData = await api("POST", "/api/replay", { pdn: text, index });
  } catch (e) { say(e.message, "error", "replay"); return; }
  const select = $("replay-game");
  select.innerHTML = "";
  replayData.games.forEach((g, i) => {
    const o = document.createElement("option");
    o.value = i; o.textContent = `${g.round}: ${g.white} – ${g.black} ${g.result} (${g.plies})`;
    select.appendChild(o);
  });
  select.value = replayData.index;
  const t = replayData.tags;
  $("replay-info").textContent = `${t.White || "?"} (White) – ${t.Black || "?"} (Black), ${replayData.layout.variant}, result ${replayData.result}` + (t.Termination ? ` (${t.Termination})` : "");
  const moves = $("replay-moves");
  moves.innerHTML = "";
  replayData.moves.forEach((m, i) => {
    if (i % 2 === 0) moves.appendChild(document.createTextNode(`${i / 2 + 1}. `));
    const s = document.createElement("span");
    s.textContent = m; s.dataset.ply = i + 1;
    s.addEventListener("click", () => showPly(i + 1));
    moves.appendChild(s);
    moves.appendChild(document.createTextNode(" "));
  });
  say(`loaded game ${replayData.index + 1} of ${replayData.count}: ${replayData.moves.length} moves`, "info", "replay");
  showPly(0);
}

function showPly(k) {
  if (!replayData) return;
  replayPly = Math.max(0, Math.min(k, replayData.frames.length - 1));
  const pos = replayData.frames[replayPly];
  drawBoard($("replay-board"), replayData.layout, pos, { marked: new Set(pos.last || []), captured: new Set() });
  $("rp-ply").textContent = `ply ${replayPly} / ${replayData.frames.length - 1}` + (replayPly ? `: ${replayData.moves[replayPly - 1]}` : " (start)");
  showScores($("replay-scores"), replayData.layout, pos);
  document.querySelectorAll("#replay-moves span").forEach((s) => s.classList.toggle("current", Number(s.dataset.ply) === replayPly));
}

function stopReplay() {
  if (replayTimer) clearInterval(replayTimer);
  replayTimer = null;
  $("rp-play").textContent = "Play";
}

function toggleReplay() {
  if (!replayData) return;
  if (replayTimer) { stopReplay(); return; }
  if (replayPly >= replayData.frames.length - 1) showPly(0);
  $("rp-play").textContent = "Pause";
  replayTimer = setInterval(() => {
    if (replayPly >= replayData.frames.length - 1) { stopReplay(); return; }
    showPly(replayPly + 1);
  }, Number($("rp-speed").value));
}

// ---------------------------------------------------------------- watch an arena match
let arena = null, arenaWS = null;

async function startArena(ev) {
  ev.preventDefault();
  const specs = $("w-specs").value.split(",").map((s) => s.trim()).filter((s) => s);
  const body = { variant: $("w-variant").value, specs, games: Number($("w-games").value),
    clock: $("w-clock").value, delay: Number($("w-delay").value) };
  try {
    arena = await api("POST", "/api/arena", body);
  } catch (e) { say(e.message, "error", "watch"); return; }
  say(`arena match started: ${arena.players.join(", ")}, ${arena.games} games`, "info", "watch");
  renderArena();
  if (arenaWS) { arenaWS.onclose = null; arenaWS.close(); }
  const proto = location.protocol === "https:" ? "wss" : "ws";
  arenaWS = new WebSocket(`${proto}://${location.host}/api/arena/${arena.id}/ws`);
  arenaWS.onmessage = (e) => { const s = JSON.parse(e.data); if (arena && s.id === arena.id) { arena = s; renderArena(); } };
}

function renderArena() {
  if (!arena) return;
  const cur = arena.current;
  if (cur) {
    drawBoard($("watch-board"), cur.layout, cur.position, { marked: new Set(cur.position.last || []) });
    $("w-info").textContent = `Game ${cur.index} of ${arena.games}: ${cur.white} (White) – ${cur.black} (Black)` + (cur.result ? ` — ${cur.result} (${cur.termination})` : "");
    showScores($("w-scores"), cur.layout, cur.position);
    $("w-moves").textContent = cur.moves.map((m, i) => (i % 2 === 0 ? `${i / 2 + 1}. ` : "") + m).join(" ");
  }
  const body = $("w-results").querySelector("tbody");
  body.innerHTML = "";
  arena.results.forEach((r) => {
    const tr = document.createElement("tr");
    [r.round, r.white, r.black, r.result, r.termination].forEach((v) => { const td = document.createElement("td"); td.textContent = v; tr.appendChild(td); });
    body.appendChild(tr);
  });
  $("w-points").textContent = "Points: " + Object.entries(arena.points).map(([k, v]) => `${k} ${v}`).join(", ") +
    (arena.running ? ` — playing (${arena.played}/${arena.games})` : " — finished") + (arena.error ? ` — error: ${arena.error}` : "");
  if (arena.error) say(arena.error, "error", "watch");
  $("w-stop").disabled = !arena.running;
  const dl = $("w-download");
  dl.href = `/api/arena/${arena.id}/pdn`;
  dl.classList.toggle("disabled", arena.played === 0);
}

// ---------------------------------------------------------------- set-up
// Before a game (a match, a replay) the board shows the chosen variant's start position.
function drawStart(svgId, variant) {
  const start = meta && meta.start[variant];
  if (start) drawBoard($(svgId), start.layout, start.position, { flip: svgId === "play-board" && flipped });
}

function showTab(tab) {
  currentTab = tab;
  document.querySelectorAll(".tab[data-tab]").forEach((b) => b.classList.toggle("active", b.dataset.tab === tab));
  document.querySelectorAll(".panel").forEach((p) => { p.hidden = p.id !== `panel-${tab}`; });
  showMessage();
}

function fillSpecs() {
  const variant = $("variant").value, list = $("specs");
  list.innerHTML = "";
  const specs = meta.players.concat(meta.pretrained[variant] || [], meta.checkpoints[variant] || []);
  (meta.checkpoints[variant] || []).forEach((c) => specs.push(c + ",depth=2"));
  specs.forEach((s) => { const o = document.createElement("option"); o.value = s; list.appendChild(o); });
}

function fillSelect(select, values, chosen) {
  select.innerHTML = "";
  values.forEach((v) => { const o = document.createElement("option"); o.value = v; o.textContent = v; select.appendChild(o); });
  select.value = chosen;
}

async function init() {
  document.querySelectorAll(".tab[data-tab]").forEach((t) => t.addEventListener("click", () => showTab(t.dataset.tab)));
  try { meta = await api("GET", "/api/meta"); } catch (e) { say(e.message, "error"); return; }
  fillSelect($("variant"), meta.variants, "damii");
  fillSelect($("w-variant"), meta.variants, "damii");
  fillSelect($("clock"), meta.clocks, "none");
  fillSelect($("w-clock"), meta.clocks.filter((c) => !c.startsWith("sci-damath")), "none");
  fillSpecs();
  drawStart("play-board", "damii");
  drawStart("watch-board", "damii");
  drawStart("replay-board", "damii");
  $("variant").addEventListener("change", () => { fillSpecs(); if (!game) drawStart("play-board", $("variant").value); });
  $("w-variant").addEventListener("change", () => { if (!arena) drawStart("watch-board", $("w-variant").value); });
  $("new-game").addEventListener("submit", newGame);
  $("lobby-form").addEventListener("submit", openLobbyGame);
  $("lobby-refresh").addEventListener("click", showLobby);
  $("resign").addEventListener("click", () => send("resign", {}));
  $("offer-draw").addEventListener("click", () => send("draw", { action: "offer" }));
  $("accept-draw").addEventListener("click", () => send("draw", { action: "accept" }));
  $("decline-draw").addEventListener("click", () => send("draw", { action: "decline" }));
  $("claim-draw").addEventListener("click", () => send("claim", {}));
  $("takeback").addEventListener("click", () => send("takeback", {}));
  $("flip").addEventListener("click", () => { flipped = !flipped; if (game) renderGame(); else drawStart("play-board", $("variant").value); });
  $("replay-load").addEventListener("click", () => loadReplay(0));
  $("replay-file").addEventListener("change", async (ev) => {
    const file = ev.target.files[0];
    if (!file) return;
    if (file.size > 1000000) { say(`${file.name} is too large (limit 1 MB)`, "error", "replay"); return; }
    $("replay-text").value = await file.text();
    loadReplay(0);
  });
  $("replay-game").addEventListener("change", () => loadReplay(Number($("replay-game").value)));
  $("rp-first").addEventListener("click", () => { stopReplay(); showPly(0); });
  $("rp-prev").addEventListener("click", () => { stopReplay(); showPly(replayPly - 1); });
  $("rp-next").addEventListener("click", () => { stopReplay(); showPly(replayPly + 1); });
  $("rp-last").addEventListener("click", () => { stopReplay(); showPly(1e9); });
  $("rp-play").addEventListener("click", toggleReplay);
  $("new-arena").addEventListener("submit", startArena);
  $("w-stop").addEventListener("click", async () => {
    if (!arena) return;
    try { arena = await api("POST", `/api/arena/${arena.id}/stop`, {}); renderArena(); } catch (e) { say(e.message, "error", "watch"); }
  });
  document.body.dataset.ready = "1";
  openFromClubs();
}

// From the clubs page: /?club=ID shows that club's lobby; /?game=ID opens a lobby game
// (a tournament board: its player's seat, else watched).
async function openFromClubs() {
  const params = new URLSearchParams(location.search), gid = params.get("game");
  if (!lobbyClub && !gid) return;
  await showLobby();
  if (!gid) return;
  let data;
  try { data = await api("GET", "/api/lobby" + (lobbyClub ? `?club=${encodeURIComponent(lobbyClub)}` : "")); } catch (e) { return; }
  const g = data.games.find((x) => x.id === gid);
  if (g) watchGame(g.id, g.you); else watchGame(gid, []);
}

init();
