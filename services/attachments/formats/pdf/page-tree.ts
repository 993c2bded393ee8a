// The page tree (ISO 32000-1 §7.7.3): the catalog, the root /Pages node with its /Count, and the
// leaf of one page found by descending through /Count values, with inherited /Resources and page
// boxes.
import { type Box, intersect, readBox } from "./geometry";
import { isInt, isName, type PdfDict, PdfError, type PdfObj, type PdfResolver } from "./objects";

const MAX_TREE_DEPTH = 64;
const MAX_PAGES = 10_000_000;
/** Most entries of /Kids resolved to count the pages. */
const MAX_COUNTED_KIDS = 20_000;
/**
 * Bytes of file a page is taken to need: a page object with its box, resources and contents, its
 * /Kids entry and its xref entry come to more. A root /Count the file is large enough for is
 * checked by finding its last page; any larger one by counting the pages. Files of smaller pages
 * (compressed, or inheriting all but /Contents) are counted too: more reads, the same count.
 */
const MIN_PAGE_BYTES = 128;

export interface PageLeaf {
  dict: PdfDict;
  /** The page's /Resources, or the nearest ancestor's (inheritance, §7.7.3.4). */
  resources: PdfDict | null;
  /**
   * The visible region in default user space, [x0 y0 x1 y1]: the /CropBox within the /MediaBox
   * (both inheritable); null when the page has no usable box.
   */
  box: Box | null;
}

/** What a page inherits from its ancestors (§7.7.3.4), unresolved until the leaf is reached. */
interface Inherited {
  resources: PdfDict | null;
  mediaBox: PdfObj | undefined;
  cropBox: PdfObj | undefined;
}

function inherit(node: PdfDict, from: Inherited, resources: PdfDict | null): Inherited {
  return {
    resources: resources ?? from.resources,
    mediaBox: node.get("MediaBox") ?? from.mediaBox,
    cropBox: node.get("CropBox") ?? from.cropBox,
  };
}

async function leafOf(doc: PdfResolver, kid: PdfDict, from: Inherited): Promise<PageLeaf> {
  const own = inherit(kid, from, await doc.resolveDict(kid.get("Resources")));
  const usable = (b: Box | null) => (b && b[2] > b[0] && b[3] > b[1] ? b : null);
  const media = usable(await readBox(doc, own.mediaBox));
  const crop = usable(await readBox(doc, own.cropBox));
  // A crop box outside the media box is an error viewers overlook by showing the media box.
  const box = usable(intersect(media, crop)) ?? media;
  return { dict: kid, resources: own.resources, box };
}

export async function catalog(doc: PdfResolver): Promise<PdfDict> {
  const root = await doc.resolveDict(doc.trailer.get("Root"));
  if (!root) throw new PdfError("broken PDF: the document catalog (/Root) is missing");
  return root;
}

/** An open document and its file's length in bytes. */
type SizedResolver = PdfResolver & { readonly size: number };

export async function pagesRoot(doc: SizedResolver): Promise<{ node: PdfDict; count: number }> {
  const cat = await catalog(doc);
  const node = await doc.resolveDict(cat.get("Pages"));
  if (!node) throw new PdfError("broken page tree: the catalog has no /Pages");
  const count = await doc.resolve(node.get("Count"));
  if (!isInt(count) || count < 0 || count > MAX_PAGES)
    throw new PdfError("broken page tree: the root /Pages node has no valid /Count");
  return { node, count: await checkedCount(doc, node, count) };
}

/**
 * The root /Count, checked. /Count is only a number in the file: a one-page file saying 100,000
 * would be announced as 100,000 pages and have jobs queued to index pages that do not exist.
 * Finding the last page costs one leaf read in a flat tree, but is no proof on its own: it skips
 * sibling subtrees by their own /Count, so a /Pages node saying 9,999,999 over one page passes it.
 * It is taken only for a count the file's size can hold (a lie then claims no more pages than a
 * file of real ones would have); any other count, or one whose last page is missing, is replaced
 * by counting the pages, and a tree too large to count keeps a count its last page confirms. A
 * tree that cannot be counted (missing kids, a cycle) is a PdfError, which sends the file to pdf.js.
 */
async function checkedCount(doc: SizedResolver, root: PdfDict, count: number): Promise<number> {
  if (count === 0 && !Array.isArray(await doc.resolve(root.get("Kids")))) return 0;
  if (count > 0 && count * MIN_PAGE_BYTES <= doc.size) {
    try {
      await findPage(doc, count - 1, root);
      return count;
    } catch (err) {
      if (!(err instanceof PdfError)) throw err;
    }
  }
  const leaves = await countLeaves(doc, root);
  if (leaves !== null) return leaves;
  if (count > 0) await findPage(doc, count - 1, root);
  return count;
}

/**
 * The leaves under `root`, or null when counting them takes resolving more than MAX_COUNTED_KIDS
 * entries of /Kids. A node whose /Count is its number of kids (the flat trees most writers make)
 * is taken at its word without resolving them: each page it claims is then an entry of its /Kids,
 * read in full to parse the node, while a /Pages node's /Count is one number that can say
 * anything. Level by level, so a tree over the bound is known before its kids are resolved.
 */
async function countLeaves(doc: PdfResolver, root: PdfDict): Promise<number | null> {
  const batch = doc.prefetchMax;
  const seen = new Set<PdfDict>([root]);
  let level = [root];
  let leaves = 0;
  let resolved = 0;
  for (let depth = 0; level.length > 0; depth++) {
    if (depth > MAX_TREE_DEPTH) throw new PdfError("broken page tree: it is too deep");
    const open: PdfObj[][] = [];
    for (const node of level) {
      const kids = await doc.resolve(node.get("Kids"));
      if (!Array.isArray(kids)) throw new PdfError("broken page tree: a /Pages node has no /Kids");
      if ((await doc.resolve(node.get("Count"))) === kids.length) leaves += kids.length;
      else {
        open.push(kids);
        resolved += kids.length;
      }
    }
    if (resolved > MAX_COUNTED_KIDS) return null;
    const next: PdfDict[] = [];
    for (const kids of open) {
      for (let i = 0; i < kids.length; i++) {
        if (i % batch === 0) await doc.prefetch(kids.slice(i, i + batch));
        const kid = await doc.resolveDict(kids[i]);
        if (!kid) throw new PdfError("broken page tree: an entry of /Kids is missing");
        if (isLeaf(kid)) leaves++;
        else if (seen.has(kid)) throw new PdfError("broken page tree: it contains a cycle");
        else {
          seen.add(kid);
          next.push(kid);
        }
      }
    }
    level = next;
  }
  return leaves;
}

/**
 * The leaf for 0-based page `index`: descends from the root, skipping whole subtrees by their
 * /Count. When a node's /Count equals its number of kids (every kid a leaf, as in the flat trees
 * many writers produce) the kid is picked directly instead of fetching its siblings.
 */
export async function findPage(doc: PdfResolver, index: number, root: PdfDict): Promise<PageLeaf> {
  const batch = doc.prefetchMax;
  let node = root;
  let inherited = inherit(
    root,
    { resources: null, mediaBox: undefined, cropBox: undefined },
    await doc.resolveDict(root.get("Resources")),
  );
  let target = index;
  const path = new Set<PdfDict>([root]);
  for (let depth = 0; ; depth++) {
    if (depth > MAX_TREE_DEPTH) throw new PdfError("broken page tree: it is too deep");
    const kids = await doc.resolve(node.get("Kids"));
    if (!Array.isArray(kids)) throw new PdfError("broken page tree: a /Pages node has no /Kids");
    const count = await doc.resolve(node.get("Count"));
    if (count === kids.length && target < kids.length) {
      const kid = await doc.resolveDict(kids[target]);
      if (kid && isLeaf(kid)) return leafOf(doc, kid, inherited);
    }
    let next: PdfDict | null = null;
    for (let i = 0; i < kids.length; i++) {
      if (i % batch === 0) await doc.prefetch(kids.slice(i, i + batch));
      const kid = await doc.resolveDict(kids[i]);
      // A kid that is no object: how many pages it held is unknown, so the pages after it cannot be
      // told apart (skipping it would give page 3's text as page 2's). The reader falls back to pdf.js.
      if (!kid) throw new PdfError(`broken page tree: an entry of /Kids is missing before page ${index + 1}`);
      if (isLeaf(kid)) {
        if (target === 0) return leafOf(doc, kid, inherited);
        target--;
        continue;
      }
      const c = await doc.resolve(kid.get("Count"));
      if (!isInt(c) || c < 0) throw new PdfError("broken page tree: a /Pages node has no valid /Count");
      if (target < c) {
        next = kid;
        break;
      }
      target -= c;
    }
    if (!next) throw new PdfError(`broken page tree: page ${index + 1} is not where the /Count values say`);
    if (path.has(next)) throw new PdfError("broken page tree: it contains a cycle");
    path.add(next);
    node = next;
    inherited = inherit(node, inherited, await doc.resolveDict(node.get("Resources")));
  }
}

function isLeaf(d: PdfDict): boolean {
  const t = d.get("Type");
  if (isName(t, "Page")) return true;
  if (isName(t, "Pages")) return false;
  return !d.has("Kids");
}
