// README.md's key rotation recipe creates the new key with the body the workers test
// key-rotation-recipe.test.ts runs the whole recipe with, so the recipe as printed is the one tested.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ROTATION_NEW_KEY } from "../fixtures/readme-rotation";

describe("README's key rotation recipe", () => {
  it("creates the new key with the body the recipe's workers test uses", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const recipe = readme.slice(readme.indexOf("Rotation is create + revoke"));
    const step1 = /# 1\. [^\n]*\ncurl -s -X POST localhost:8787\/v1\/keys [^\n]*\n[^\n]*-d '([^']*)'/.exec(recipe);
    expect(step1, "step 1 of the recipe").not.toBeNull();
    expect(JSON.parse(step1![1])).toEqual(ROTATION_NEW_KEY);
  });
});
