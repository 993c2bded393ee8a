// Draws the replay size per turn (the sawtooth) as a standalone SVG, with the fold threshold and,
// on a second axis, the naive full replay for comparison.
export function sawtoothSvg(rows, threshold) {
  const W = 1000,
    H = 420,
    L = 70,
    R = 70,
    T = 40,
    B = 50;
  const maxTurn = rows.length;
  const maxReplay = Math.max(threshold * 1.25, ...rows.map((r) => r.replay));
  const maxNaive = Math.max(...rows.map((r) => r.naive));
  const x = (t) => L + ((W - L - R) * t) / maxTurn;
  const y = (v) => H - B - ((H - T - B) * v) / maxReplay;
  const yn = (v) => H - B - ((H - T - B) * v) / maxNaive;
  const path = (pts) => pts.map(([px, py], i) => `${i ? "L" : "M"}${px.toFixed(1)},${py.toFixed(1)}`).join("");
  const replay = path(rows.map((r) => [x(r.turn), y(r.replay)]));
  const naive = path(rows.map((r) => [x(r.turn), yn(r.naive)]));
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const v = Math.round(maxReplay * f);
    return `<line x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/><text x="${L - 6}" y="${y(v) + 4}" text-anchor="end">${(v / 1000).toFixed(0)}K</text>`;
  });
  const nticks = [0, 0.5, 1].map(
    (f) =>
      `<text x="${W - R + 6}" y="${yn(maxNaive * f) + 4}" fill="#999">${((maxNaive * f) / 1e6).toFixed(1)}M</text>`,
  );
  const xticks = [0, 0.25, 0.5, 0.75, 1].map(
    (f) => `<text x="${x(maxTurn * f)}" y="${H - B + 18}" text-anchor="middle">${Math.round(maxTurn * f)}</text>`,
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="${L}" y="22" font-size="15" font-weight="bold">Replay size per turn (chars): the sawtooth</text>
${ticks.join("\n")}
${nticks.join("\n")}
${xticks.join("\n")}
<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">turn</text>
<line x1="${L}" x2="${W - R}" y1="${y(threshold)}" y2="${y(threshold)}" stroke="#d33" stroke-dasharray="6 4"/>
<text x="${W - R - 4}" y="${y(threshold) - 6}" text-anchor="end" fill="#d33">fold threshold ${threshold.toLocaleString("en")}</text>
<path d="${naive}" fill="none" stroke="#999" stroke-dasharray="3 3"/>
<text x="${W - R - 4}" y="${T + 14}" text-anchor="end" fill="#999">naive full replay (right axis)</text>
<path d="${replay}" fill="none" stroke="#1f6feb" stroke-width="1.2"/>
<text x="${L + 8}" y="${T + 14}" fill="#1f6feb">replay: summary + verbatim tail (left axis)</text>
</svg>
`;
}
