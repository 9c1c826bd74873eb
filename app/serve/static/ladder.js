// damii serve: the ladder page (/ladder): the Elo ladder and the latest finished games,
// from /api/ladder and /api/history. Plain JS, no build step.
"use strict";

const $ = (id) => document.getElementById(id);
const REFRESH_MS = 15000;
const club = new URLSearchParams(location.search).get("club");   // /ladder?club=ID: that club's
const query = club ? `?club=${encodeURIComponent(club)}` : "";

function say(text, kind = "info") {
  const m = $("message");
  m.textContent = text || "";
  m.className = text ? kind : "";
}

function row(cells) {
  const tr = document.createElement("tr");
  cells.forEach((cell) => {
    const td = document.createElement("td");
    if (cell instanceof Node) td.appendChild(cell); else td.textContent = cell;
    tr.appendChild(td);
  });
  return tr;
}

function fill(table, rows, empty, columns) {
  const body = $(table).querySelector("tbody");
  body.innerHTML = "";
  if (!rows.length) {
    const tr = row([empty]);
    tr.firstChild.colSpan = columns;
    body.appendChild(tr);
  }
  rows.forEach((r) => body.appendChild(r));
}

let links = [];   // the PDN downloads' object URLs, freed at each refresh

function pdnLink(game) {
  const a = document.createElement("a");
  a.textContent = "PDN";
  a.href = URL.createObjectURL(new Blob([game.pdn], { type: "text/plain" }));
  links.push(a.href);
  a.download = `damii-${game.id}.pdn`;
  return a;
}

async function getJSON(url) {
  let resp;
  try { resp = await fetch(url, { cache: "no-store" }); } catch (e) {
    throw new Error("the server cannot be reached: " + e.message);
  }
  if (!resp.ok) throw new Error(`${url}: request failed (${resp.status})`);
  return resp.json();
}

async function load() {
  let ladder, history;
  try {
    [ladder, history] = await Promise.all([getJSON("/api/ladder" + query), getJSON("/api/history" + query)]);
  } catch (e) { say(e.message, "error"); return; }
  if (!ladder.kept) {
    say("This server keeps no ladder: start it with damii serve --db FILE (e.g. --db damii.db) to rate games and keep them.", "info");
  } else {
    say("");
  }
  if (ladder.club) $("ladder-title").textContent = `Ladder of ${ladder.club} (its rated games)`;
  const players = ladder.players.map((p, i) => row([p.games ? String(i + 1) : "–", p.name, p.kind,
    p.rating.toFixed(0), String(p.games)]));
  fill("ladder", players, "no rated game yet", 5);
  links.forEach((url) => URL.revokeObjectURL(url));
  links = [];
  const games = history.games.map((g) => row([new Date(g.finished * 1000).toLocaleString(), g.white,
    g.black, g.variant, g.result, g.termination, g.rated ? "yes" : "no", pdnLink(g)]));
  fill("history", games, "no finished game yet", 8);
  $("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
  document.body.dataset.ready = "1";
}

$("refresh").addEventListener("click", load);
setInterval(load, REFRESH_MS);
load();
