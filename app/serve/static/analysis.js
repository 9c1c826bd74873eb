"use strict";
// The Analyse tab: a game's review (evaluation graph, marked moves, a click on a move shows
// the position and the engine's better line) and the analysis board (any position's
// evaluation and best line, deepened while it thinks). Uses app.js's $, api, say and
// drawBoard. The server refuses rated, club, tournament and classroom games while they
// run (fair play) and says why; the message shows here.

let review = null;          // the finished review (GET /api/analysis/{id}'s review)
let reviewPdn = null;       // the reviewed game's PDN text, replayed for the positions
let reviewFrames = null;    // /api/replay's answer for it
let lineFrames = null, linePly = 0;
let boardRun = 0;           // the analysis board's current request (a newer one stops the older)

const MARK_CLASS = { "?!": "inaccuracy", "?": "mistake", "??": "blunder" };
const BOARD_STEPS = [0.2, 0.5, 1, 2, 4];   // seconds: the board deepens its search step by step

function aSay(text, kind = "info") { say(text, kind, "analysis"); }

async function startReview(body) {
  const seconds = Number($("an-seconds").value);
  review = null; reviewFrames = null;
  $("an-moves").innerHTML = ""; $("an-graph").innerHTML = ""; $("an-summary").textContent = "";
  let state;
  try { state = await api("POST", "/api/analysis", { ...body, seconds }); } catch (e) { aSay(e.message, "error"); return; }
  reviewPdn = body.pdn || null;
  while (state.running) {
    $("an-progress").textContent = `analysing: ${state.done} / ${state.total} positions (${state.player}, ${state.seconds} s a position)`;
    await new Promise((r) => setTimeout(r, 500));
    try { state = await api("GET", `/api/analysis/${state.id}`); } catch (e) { aSay(e.message, "error"); return; }
  }
  if (state.error) { $("an-progress").textContent = ""; aSay(state.error, "error"); return; }
  $("an-progress").textContent = `done: ${state.total} positions (${state.player}, ${state.seconds} s a position)`;
  review = state.review;
  if (!reviewPdn) reviewPdn = await pdnOfGame(body.game);
  try { reviewFrames = await api("POST", "/api/replay", { pdn: reviewPdn, index: body.index || 0 }); } catch (e) { aSay(e.message, "error"); return; }
  showReview(state);
}

async function pdnOfGame(gid) {
  const resp = await fetch(`/api/games/${gid}/pdn`);
  return resp.text();
}

function count(n, one, many) { return `${n} ${n === 1 ? one : many}`; }

function evalUnit() { return review.scoring ? 10 : 100; }

function showReview(state) {
  const unit = review.scoring ? "points of the totals' lead" : "men";
  const names = [state.white, state.black];
  $("an-summary").innerHTML = "";
  review.summary.forEach((s, side) => {
    const div = document.createElement("div");
    div.className = "an-side";
    div.textContent = `${side ? "Black" : "White"} (${names[side]}): average loss ${(s.average_loss / evalUnit()).toFixed(2)} ${unit}; ` +
      `${count(s.marks["?!"], "inaccuracy", "inaccuracies")} (?!), ${count(s.marks["?"], "mistake", "mistakes")} (?), ` +
      `${count(s.marks["??"], "blunder", "blunders")} (??)`;
    $("an-summary").appendChild(div);
  });
  drawGraph();
  const moves = $("an-moves");
  moves.innerHTML = "";
  review.moves.forEach((m, i) => {
    const number = Math.floor((i + review.moves[0].mover) / 2) + 1;
    if (m.mover === 0 || i === 0) moves.appendChild(document.createTextNode(`${number}${m.mover ? "..." : "."} `));
    const s = document.createElement("span");
    s.textContent = m.move + m.mark;
    s.dataset.ply = i;
    s.title = m.comment;
    if (m.mark) s.classList.add(MARK_CLASS[m.mark]);
    s.addEventListener("click", () => showMove(i));
    moves.appendChild(s);
    moves.appendChild(document.createTextNode(" "));
  });
  const first = review.moves.findIndex((m) => m.mark);
  showMove(first >= 0 ? first : 0);
}

// the evaluation for White after each ply, as an SVG line; a click picks the move
function drawGraph() {
  const svg = $("an-graph"), values = review.graph.map((v) => v / evalUnit());
  const w = 600, h = 160, n = Math.max(1, values.length - 1);
  const top = Math.max(1, ...values.map(Math.abs)) * 1.1;
  const x = (i) => (i / n) * w, y = (v) => h / 2 - (v / top) * (h / 2);
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("preserveAspectRatio", "none");   // the graph spans the page's width
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  el("rect", { x: 0, y: 0, width: w, height: h, fill: "#fff" }, svg);
  el("line", { x1: 0, y1: h / 2, x2: w, y2: h / 2, stroke: "#999" }, svg);
  el("polyline", { points: values.map((v, i) => `${x(i)},${y(v)}`).join(" "), fill: "none", stroke: "#333", "stroke-width": 1.5 }, svg);
  review.moves.forEach((m, i) => {
    if (!m.mark) return;
    const dot = el("circle", { cx: x(i + 1), cy: y(values[i + 1]), r: 4, class: `an-dot ${MARK_CLASS[m.mark]}`, "data-ply": i }, svg);
    dot.addEventListener("click", () => showMove(i));
  });
  const hit = el("rect", { x: 0, y: 0, width: w, height: h, fill: "transparent", style: "cursor:pointer" }, svg);
  svg.insertBefore(hit, svg.querySelector(".an-dot"));
  hit.addEventListener("click", (ev) => {
    const box = svg.getBoundingClientRect();
    showMove(Math.max(0, Math.min(review.moves.length - 1, Math.round(((ev.clientX - box.left) / box.width) * n) - 1)));
  });
}

// a move of the review: the position before it, the engine's better line to step through
async function showMove(i) {
  const m = review.moves[i];
  document.querySelectorAll("#an-moves span").forEach((s) => s.classList.toggle("current", Number(s.dataset.ply) === i));
  const before = reviewFrames.frames[i];
  const text = m.mark ? `${m.move}${m.mark}: ${m.comment}` : `${m.move}: ${m.eval}` + (m.best !== m.move ? ` (the engine: ${m.best})` : " (the engine's choice)");
  $("an-move").textContent = text;
  lineFrames = null;
  const line = m.line && m.line.length ? m.line : [m.best];
  const pdn = `[Variant "${reviewFrames.layout.variant}"]\n[FEN "${before.fen}"]\n${line.join(" ")} *\n`;
  try { lineFrames = await api("POST", "/api/replay", { pdn }); } catch (e) { lineFrames = null; }
  $("an-line").textContent = m.mark ? `better line: ${line.join(" ")}` : "";
  $("an-to-board").dataset.fen = before.fen;
  showLinePly(0);
}

function showLinePly(k) {
  if (!lineFrames) return;
  linePly = Math.max(0, Math.min(k, lineFrames.frames.length - 1));
  const pos = lineFrames.frames[linePly];
  drawBoard($("an-board"), lineFrames.layout, pos, { marked: new Set(pos.last || []) });
  $("an-line-ply").textContent = linePly ? `line: ${linePly} / ${lineFrames.frames.length - 1} (${lineFrames.moves[linePly - 1]})` : "position before the move";
}

// ---------------------------------------------------------------- the analysis board
async function analyseBoard(body) {
  const run = ++boardRun;
  let frames = null;
  if (body.fen) {
    try { frames = await api("POST", "/api/replay", { pdn: `[Variant "${body.variant}"]\n[FEN "${body.fen}"]\n*\n` }); } catch (e) { aSay(e.message, "error"); return; }
    drawBoard($("an-board"), frames.layout, frames.frames[0], {});
  }
  for (const seconds of BOARD_STEPS) {
    let out;
    try { out = await api("POST", "/api/analysis/position", { ...body, seconds }); } catch (e) { if (run === boardRun) aSay(e.message, "error"); return; }
    if (run !== boardRun) return;   // a newer position was asked for
    const who = out.turn ? "Black" : "White";
    $("an-board-eval").textContent = `${out.eval} (for White${out.scoring ? ", totals' lead" : ""}), depth ${out.depth}, ${seconds} s — ${who} to move, best ${out.best || "none"}` +
      (out.best_points ? ` (${out.best_points} points)` : "");
    $("an-board-line").textContent = out.line.length ? `line: ${out.line.join(" ")}` : "the game is over";
    if (!out.legal) return;
  }
}

function initAnalysis() {
  $("an-current").addEventListener("click", () => {
    if (typeof game === "undefined" || !game) { aSay("no game on the Play tab", "error"); return; }
    startReview({ game: game.id });
  });
  $("an-replay").addEventListener("click", () => {
    const text = $("replay-text").value;
    if (!text.trim()) { aSay("load a PDN on the Replay tab first, or paste one here", "error"); return; }
    $("an-pdn").value = text;
    startReview({ pdn: text, index: Number($("replay-game").value || 0) });
  });
  $("an-start").addEventListener("click", () => {
    const text = $("an-pdn").value;
    if (!text.trim()) { aSay("paste a PDN first", "error"); return; }
    startReview({ pdn: text, index: 0 });
  });
  $("an-line-prev").addEventListener("click", () => showLinePly(linePly - 1));
  $("an-line-next").addEventListener("click", () => showLinePly(linePly + 1));
  $("an-to-board").addEventListener("click", () => {
    if (!$("an-to-board").dataset.fen || !reviewFrames) return;
    $("an-fen").value = $("an-to-board").dataset.fen;
    $("an-variant").value = reviewFrames.layout.variant;
    analyseBoard({ variant: reviewFrames.layout.variant, fen: $("an-fen").value });
  });
  $("an-board-go").addEventListener("click", () => analyseBoard({ variant: $("an-variant").value, fen: $("an-fen").value.trim() || null }));
  $("an-hint").addEventListener("click", () => {
    if (typeof game === "undefined" || !game) { aSay("no game on the Play tab", "error"); return; }
    analyseBoard({ game: game.id });
  });
  const fill = () => { if (typeof meta !== "undefined" && meta) fillSelect($("an-variant"), meta.variants, "damii"); else setTimeout(fill, 200); };
  fill();
}

initAnalysis();
