// Drives Debian's chromium (headless, through puppeteer-core): opens PAGE_URL,
// runs the page's function FUNCTION with the gateway's ENDPOINT and a key, and
// prints what it answered, then "console: ..." for each message the browser
// logged (a CORS refusal is one).  Usage:
//   node browser.mjs PAGE_URL FUNCTION ENDPOINT KEY_ID SECRET
import puppeteer from "puppeteer-core";

const [pageUrl, fn, endpoint, keyId, secret] = process.argv.slice(2);
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  // root has no sandbox; no first-run or crash-report chatter
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-breakpad"],
});
try {
  const page = await browser.newPage();
  const logged = [];
  page.on("console", (message) => logged.push(message.text()));
  await page.goto(pageUrl, { waitUntil: "load" });
  console.log(await page.evaluate((f, ...args) => window[f](...args), fn, endpoint, keyId, secret));
  for (const line of logged) console.log(`console: ${line}`);
} finally {
  await browser.close();
}
