// Ordered tree edit distance with unit delete and insert costs and a caller's rename cost: what
// opendataloader-bench computes with the `apted` package (APTED(t1, t2, config).compute_edit_distance()
// in src/evaluator_table.py and src/evaluator_heading_level.py; apted's Config has delete = insert = 1).
// APTED (Pawlik & Augsten) and Zhang–Shasha (1989) compute the same optimal distance — APTED only
// picks a cheaper decomposition strategy — so this is Zhang–Shasha's keyroot algorithm, which is
// ample for tables of a few hundred cells and heading trees of a few hundred nodes.

export type TreeNode<T> = { value: T; children: TreeNode<T>[] };

type Postorder<T> = { values: T[]; leftmost: number[]; keyroots: number[] };

/** 1-based postorder numbering, each node's leftmost leaf, and the keyroots (Zhang–Shasha). */
function postorder<T>(root: TreeNode<T>): Postorder<T> {
  const values: T[] = [undefined as T];
  const leftmost: number[] = [0];
  const visit = (node: TreeNode<T>): number => {
    let first = -1;
    for (const child of node.children) {
      const l = visit(child);
      if (first < 0) first = l;
    }
    values.push(node.value);
    const index = values.length - 1;
    leftmost.push(first < 0 ? index : (leftmost[first] ?? index));
    return index;
  };
  visit(root);
  // A keyroot is the highest node with a given leftmost leaf.
  const highest = new Map<number, number>();
  for (let i = 1; i < values.length; i += 1) highest.set(leftmost[i] ?? i, i);
  return { values, leftmost, keyroots: [...highest.values()].sort((a, b) => a - b) };
}

export function treeEditDistance<T>(a: TreeNode<T>, b: TreeNode<T>, rename: (x: T, y: T) => number): number {
  const A = postorder(a);
  const B = postorder(b);
  const n = A.values.length - 1;
  const m = B.values.length - 1;
  const td = new Float64Array((n + 1) * (m + 1));
  const renames = new Float64Array((n + 1) * (m + 1)).fill(Number.NaN);
  const renameCost = (i: number, j: number) => {
    let cost = renames[i * (m + 1) + j] ?? Number.NaN;
    if (Number.isNaN(cost)) renames[i * (m + 1) + j] = cost = rename(A.values[i] as T, B.values[j] as T);
    return cost;
  };
  for (const i of A.keyroots) {
    for (const j of B.keyroots) {
      const li = A.leftmost[i] ?? i;
      const lj = B.leftmost[j] ?? j;
      const rows = i - li + 2;
      const cols = j - lj + 2;
      const fd = new Float64Array(rows * cols);
      for (let x = 1; x < rows; x += 1) fd[x * cols] = x; // delete each node
      for (let y = 1; y < cols; y += 1) fd[y] = y; // insert each node
      for (let x = 1; x < rows; x += 1) {
        const i1 = li + x - 1;
        const li1 = A.leftmost[i1] ?? i1;
        for (let y = 1; y < cols; y += 1) {
          const j1 = lj + y - 1;
          const lj1 = B.leftmost[j1] ?? j1;
          const del = (fd[(x - 1) * cols + y] ?? 0) + 1;
          const ins = (fd[x * cols + y - 1] ?? 0) + 1;
          if (li1 === li && lj1 === lj) {
            const value = Math.min(del, ins, (fd[(x - 1) * cols + y - 1] ?? 0) + renameCost(i1, j1));
            fd[x * cols + y] = value;
            td[i1 * (m + 1) + j1] = value;
          } else {
            const before = fd[(li1 - li) * cols + (lj1 - lj)] ?? 0;
            fd[x * cols + y] = Math.min(del, ins, before + (td[i1 * (m + 1) + j1] ?? 0));
          }
        }
      }
    }
  }
  return td[n * (m + 1) + m] ?? 0;
}

export const countNodes = <T>(node: TreeNode<T>): number => 1 + node.children.reduce((n, c) => n + countNodes(c), 0);
