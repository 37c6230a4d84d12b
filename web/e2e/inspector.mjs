// Drives the inspector in Debian's Chromium (playwright-core, no browser
// download): node e2e/inspector.mjs BASE TOKEN SESSION SHOTS_DIR
// Checks the login, the session list and its search, a session's chart,
// a compaction and its diff, an original behind a placeholder, the
// session's checkpoints and its state at one, and a live update: it prints "LIVE?" and waits (60 s) for the test to make a call
// of SESSION, then for the page to show it. Each check prints "ok NAME";
// any failure exits 1. Then it pauses the live updates, prints "PAUSED?"
// and waits for the test to make two calls, resumes, and checks both
// turns come once.
import { chromium } from "playwright-core";
import readline from "node:readline";

const [base, token, session, shots] = process.argv.slice(2);
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const browser = await chromium.launch({
  executablePath,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
const stdin = readline.createInterface({ input: process.stdin });
const lines = stdin[Symbol.asyncIterator]();
let failed = false;
const ok = (name) => console.log("ok " + name);
const check = (cond, name, detail = "") => {
  if (!cond) { console.log(`FAIL ${name} ${detail}`); failed = true; throw new Error(name); }
  ok(name);
};
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  page.on("pageerror", (e) => { console.log("page error: " + e.message); failed = true; });
  // Without the token: the login form, the API refused.
  await page.goto(base + "/ui/");
  await page.waitForSelector("[data-testid=login]");
  const refused = await page.evaluate(async () => (await fetch("/ui/api/sessions")).status);
  check(refused === 401, "api refused without the token", String(refused));
  await page.fill("input[name=token]", "wrong");
  await Promise.all([page.waitForNavigation(), page.click("[data-testid=login] button[type=submit]")]);
  await page.waitForSelector("[data-testid=login] .error");
  ok("a wrong token is refused");
  await page.fill("input[name=token]", token);
  await Promise.all([page.waitForNavigation(), page.click("[data-testid=login] button[type=submit]")]);
  check(!page.url().includes(token), "the token is not in the URL");
  // The list, and its search.
  await page.waitForSelector(`[data-testid=sessions] tr[data-session="${session}"]`);
  const rows = await page.locator("[data-testid=sessions] tbody tr").count();
  check(rows >= 2, "the list shows the sessions", String(rows));
  await page.fill("input[name=q]", session);
  await page.waitForFunction((s) => [...document.querySelectorAll("[data-testid=sessions] tbody tr")].every((r) => r.dataset.session.includes(s)), session);
  ok("the search narrows the list");
  await page.screenshot({ path: shots + "/list.png" });
  // The session's chart.
  await page.click(`a[href="#/s/${encodeURIComponent(session)}"]`);
  await page.waitForSelector("[data-testid=chart] svg .col");
  const cols = await page.locator("[data-testid=chart] svg .col").count();
  const turns = Number((await page.textContent("[data-testid=turn-count]")).replace(/[^0-9]/g, ""));
  check(cols === Math.min(turns, 200) && cols > 1, "the chart has a column per turn", `${cols} columns, ${turns} turns`);
  const stacked = await page.locator("[data-testid=chart] svg .col rect[fill]").count();
  check(stacked >= cols, "each column stacks its components", String(stacked));
  check(await page.locator("[data-testid=chart] svg line.warn").count() === cols && await page.locator("[data-testid=chart] svg line.crit").count() === cols,
    "warning and critical lines");
  // A compaction and its diff with the turn before.
  const compacted = page.locator("[data-testid=chart] svg .col:has(circle.compacted)");
  check(await compacted.count() > 0, "the chart marks compactions");
  const turnN = Number(await compacted.last().getAttribute("data-turn"));
  await compacted.last().locator("rect.hit").click({ force: true });
  await page.waitForFunction((n) => document.querySelector("[data-testid=turn-title]")?.textContent === "Turn " + n, turnN);
  const comp = await page.textContent("[data-testid=compaction]");
  check(/Compaction: /.test(comp) && /freed/.test(comp), "the compaction shows its reason and steps", comp.slice(0, 120));
  await page.screenshot({ path: shots + "/session.png", fullPage: false });
  await page.fill("[data-testid=diff-with]", String(turnN - 1));
  await page.click("[data-testid=diff-run]");
  await page.waitForSelector("[data-testid=diff-stat]");
  const stat = await page.textContent("[data-testid=diff-stat]");
  const m = stat.match(/(\d+) lines added, (\d+) removed/);
  check(m && Number(m[1]) + Number(m[2]) > 0, "the diff shows what changed", stat);
  check(await page.locator(".difftext .del").count() > 0, "the diff marks removed lines");
  await page.locator("[data-testid=diff]").scrollIntoViewIfNeeded();
  await page.screenshot({ path: shots + "/diff.png" });
  // An original behind a placeholder.
  const marked = page.locator('[data-testid=messages] .msg[data-mark="masked"], [data-testid=messages] .msg[data-mark="cut"]').first();
  check(await marked.count() === 1, "the payload marks masked or cut messages");
  const shownText = await marked.locator("pre").first().textContent();
  await marked.locator("button.show-original").click();
  await marked.locator("[data-testid=original] pre").waitFor();
  const original = await marked.locator("[data-testid=original] pre").textContent();
  check(original.length > shownText.length && original !== shownText, "the original is one click away", `${shownText.length} -> ${original.length} chars`);
  await marked.scrollIntoViewIfNeeded();
  await page.screenshot({ path: shots + "/original.png" });
  // The session's checkpoints, and its state at one.
  await page.waitForSelector("[data-testid=checkpoints] details");
  await page.click("[data-testid=checkpoints] summary");
  const cpRows = page.locator("[data-testid=checkpoints] tbody tr");
  check(await cpRows.count() > 1, "the checkpoints are listed", String(await cpRows.count()));
  const cpRow = cpRows.nth(1); // the one before the latest
  const cpVersion = await cpRow.getAttribute("data-version");
  const cpMessages = Number((await cpRow.locator("td").nth(4).textContent()).replace(/[^0-9]/g, ""));
  await cpRow.locator("button.show-checkpoint").click();
  await page.waitForFunction((v) => document.querySelector("[data-testid=checkpoint-title]")?.textContent === "At version " + v, cpVersion);
  const held = await page.locator("[data-testid=checkpoint-messages] .msg").count();
  check(held === Math.min(cpMessages, 100) && held > 0, "a checkpoint shows the session as it stood", `${held} messages shown, ${cpMessages} held`);
  const cmds = await page.textContent("[data-testid=checkpoint-commands]");
  check(cmds.includes(`ctxhost checkpoints fork ${session} ${cpVersion}`) && cmds.includes(`ctxhost checkpoints rewind ${session} ${cpVersion}`),
    "a checkpoint says how to fork or rewind to it", cmds);
  await page.locator("[data-testid=checkpoints]").scrollIntoViewIfNeeded();
  await page.screenshot({ path: shots + "/checkpoint.png" });
  // A live update.
  const before = await page.textContent("[data-testid=turn-count]");
  await page.waitForSelector("#live.on");
  console.log("LIVE?");
  await lines.next(); // the test made a call
  await page.waitForFunction((b) => document.querySelector("[data-testid=turn-count]")?.textContent !== b, before, { timeout: 60000 });
  const after = await page.textContent("[data-testid=turn-count]");
  const colsAfter = await page.locator("[data-testid=chart] svg .col").count();
  check(Number(after.replace(/[^0-9]/g, "")) === turns + 1, "a live turn shows without a reload", `${before} -> ${after}`);
  check(colsAfter === Math.min(turns + 1, 200), "the live turn gets its column", String(colsAfter));
  await page.screenshot({ path: shots + "/live.png" });
  // Live updates paused (the stream closed), two turns made, resumed: the
  // stream starts again after the last turn it gave, so both come, once.
  const turnsPaused = Number((await page.textContent("[data-testid=turn-count]")).replace(/[^0-9]/g, ""));
  await page.click("#live");
  await page.waitForSelector("#live.paused:not(.on)");
  console.log("PAUSED?");
  await lines.next(); // the test made two calls
  await page.waitForTimeout(500);
  check(Number((await page.textContent("[data-testid=turn-count]")).replace(/[^0-9]/g, "")) === turnsPaused, "nothing comes while paused");
  await page.click("#live");
  await page.waitForFunction((b) => Number(document.querySelector("[data-testid=turn-count]")?.textContent.replace(/[^0-9]/g, "")) >= b + 2,
    turnsPaused, { timeout: 60000 });
  await page.waitForTimeout(500); // a turn sent twice would show by now
  const resumed = Number((await page.textContent("[data-testid=turn-count]")).replace(/[^0-9]/g, ""));
  const colTurns = await page.locator("[data-testid=chart] svg .col").evaluateAll((els) => els.map((e) => Number(e.dataset.turn)));
  const consecutive = colTurns.every((t, i) => i === 0 || t === colTurns[i - 1] + 1);
  check(resumed === turnsPaused + 2 && colTurns[colTurns.length - 1] === turnsPaused + 2 && consecutive,
    "the live view resumes after a disconnect, no turn lost or repeated", `${turnsPaused} -> ${resumed}, last columns ${colTurns.slice(-4)}`);
} catch (e) {
  if (!failed) console.log("FAIL " + e.message);
  failed = true;
} finally {
  await browser.close();
  stdin.close();
}
process.exit(failed ? 1 : 0);
