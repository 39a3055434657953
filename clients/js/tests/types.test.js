// The shipped types (src/index.d.ts) compile, strictly, as a backend uses them with the real
// SDKs' types (tests/types/usage.ts, which also holds what they must refuse).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const tsc = here("../node_modules/typescript/bin/tsc");

function compile(...args) {
  try {
    execFileSync(process.execPath, [tsc, ...args], { encoding: "utf8", stdio: "pipe" });
    return "";
  } catch (error) {
    return `${error.stdout}${error.stderr}`;
  }
}

test("the declarations compile on their own, strictly", () => {
  assert.equal(
    compile("--noEmit", "--strict", "--target", "es2022", "--module", "nodenext", "--lib", "es2023,dom", "--types", "node", here("../src/index.d.ts")),
    "",
  );
});

test("a backend's use of them compiles against the AI SDK and the official SDKs", () => {
  assert.equal(compile("-p", here("./types/tsconfig.json")), "");
});

test("every export has a declaration", async () => {
  const module = await import("../src/index.js");
  const { readFileSync } = await import("node:fs");
  const declared = readFileSync(here("../src/index.d.ts"), "utf8");
  for (const name of Object.keys(module)) {
    assert.match(declared, new RegExp(`export (declare )?(function|class|const) ${name}\\b`), name);
  }
});
