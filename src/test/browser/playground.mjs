// Drives the playground at / in headless Chromium (Debian's chromium through playwright-core; never a downloaded
// browser): enter the API key the page asks for, type a message, wait for streamed text, click stop, check that the
// reply stopped, and take a screenshot. Run by io.zse.api.PlaygroundBrowserTest:
//   node playground.mjs <base-url> <api-key> <screenshot.png>
// Prints one JSON line with what it saw; exits non-zero on the first failed check.
import { chromium } from "playwright-core";

const [baseUrl, apiKey, screenshot] = process.argv.slice(2);
const executablePath = process.env.ZSE_CHROMIUM || "/usr/bin/chromium";
const browser = await chromium.launch({ executablePath, headless: true, chromiumSandbox: false });
const fail = (message) => { throw new Error(message); };
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const consoleErrors = [];
  page.on("pageerror", (e) => consoleErrors.push(e.message));
  await page.goto(baseUrl + "/");
  if ((await page.title()) !== "ZSE playground") fail("title: " + (await page.title()));
  for (const href of ["/q/swagger-ui", "/q/metrics"]) {
    if ((await page.locator(`nav a[href="${href}"]`).count()) !== 1) fail("no link to " + href);
  }

  // keys are on in the test profile: the page finds out and asks for one
  await page.locator("#api-key-row").waitFor({ state: "visible", timeout: 10000 });
  await page.fill("#api-key", apiKey);
  await page.locator("#api-key").dispatchEvent("change");
  await page.locator("#model-id").waitFor({ timeout: 10000 });
  const model = await page.textContent("#model-id");

  // a slow link, so the reply is still streaming into the page when stop is clicked
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions",
    { offline: false, latency: 0, downloadThroughput: 800, uploadThroughput: -1 });

  await page.fill("#system", "Tell a story.");
  await page.fill("#max-tokens", "300");
  await page.fill("#input", "Once upon a time");
  await page.click("#send");
  const reply = page.locator(".message.assistant").last();
  await page.waitForFunction(() => {
    const t = document.querySelector(".message.assistant .text");
    return t && t.textContent.trim().length >= 10;
  }, null, { timeout: 30000 });
  const streamed = await reply.locator(".text").textContent();
  if (await page.isDisabled("#stop-button")) fail("stop is not enabled while the reply streams");
  await page.click("#stop-button");
  await reply.locator(".note", { hasText: "stopped" }).waitFor({ timeout: 10000 });
  const stopped = await reply.locator(".text").textContent();
  await page.waitForTimeout(1500);
  const later = await reply.locator(".text").textContent();
  if (later !== stopped) fail("text kept growing after stop");
  if (!stopped.startsWith(streamed)) fail("the stopped text does not continue the streamed text");
  if (await page.isDisabled("#send")) fail("send is not enabled again after stop");
  const status = await page.textContent("#status");
  const completionTokens = await page.textContent("#stat-completion");
  const userMessage = await page.locator(".message.user .text").textContent();
  if (userMessage !== "Once upon a time") fail("the user's message is not shown: " + userMessage);
  await page.screenshot({ path: screenshot, fullPage: true });
  if (consoleErrors.length) fail("page errors: " + consoleErrors.join("; "));
  console.log(JSON.stringify({ model, streamed, stopped, status, completionTokens, browser: browser.version() }));
} finally {
  await browser.close();
}
