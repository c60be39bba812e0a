/**
 * The house rules of src/, checked in CI (`npm run lint:deps`): no import cycle between files, and
 * every folder imports only folders on lower floors (docs/architecture.md). A folder's floor is its
 * index in FLOORS, lowest first; a folder may import itself and anything below it, never above.
 */
const FLOORS = [
  // core: errors, Handlebars templates, observation hooks, then the upstream transport
  ['errors', 'templates'],
  ['observe'],
  ['http'],
  ['manifest'],
  ['pagination', 'auth'],
  ['engine'],
  ['store'],
  ['search'],
  ['sync'],
  ['events'],
  ['webhooks'],
  // the simulators (vendor fakes from descriptions): the service's sandbox mode starts them
  ['simulator'],
  ['sandbox'],
  ['client'],
  ['mcp'],
  ['service'],
  ['factory', 'codegen'],
  ['cli'],
];

const folder = (name) => `^src/${name}/`;
const floorRules = FLOORS.flatMap((floor, i) => {
  const above = FLOORS.slice(i + 1).flat();
  const sameFloor = (name) => floor.filter((other) => other !== name);
  return floor.flatMap((name) => {
    const forbidden = [...above, ...sameFloor(name)];
    if (forbidden.length === 0) return [];
    return [
      {
        name: `floor-${name}`,
        comment: `src/${name} is on floor ${i}: it may import only lower floors (docs/architecture.md)`,
        severity: 'error',
        from: { path: folder(name) },
        to: { path: `^src/(${forbidden.join('|')})/` },
      },
    ];
  });
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no import cycle between files of src/',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'top-level-files',
      comment: 'src/index.ts (the public API) and src/version.ts sit outside the floors; only index.ts imports folders freely',
      severity: 'error',
      from: { path: '^src/[^/]+/' },
      to: { path: '^src/index\\.ts$' },
    },
    ...floorRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(generated|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
