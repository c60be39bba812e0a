// Lint rules for hand-written TypeScript (`npm run lint`, run in .ci/run). Generated code (generated/, dist/)
// is not linted. The size bounds of docs/architecture.md are enforced here: files at most 600 lines in
// src/, test/ and scripts/, functions at most 150 lines in src/ (we aim for 400 and 80). Tests have no
// function bound: a describe callback is long by nature.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'generated/**', 'node_modules/**', 'coverage/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Unused names are errors, except the conventional `_`-prefixed ones (kept for a signature's shape).
      // Matching control characters on purpose is this project's business (hostile input checks).
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  {
    // TypeScript checks names itself (typescript-eslint's advice).
    files: ['**/*.ts'],
    rules: { 'no-undef': 'off' },
  },
  {
    // CommonJS on purpose (a worker thread loads it by path, without the TypeScript loader).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The Connect UI's script runs in the browser.
    files: ['src/**/assets/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // Tests poke at untyped answers; `any` there is a test's business.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['test/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 600 }] },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 600 }],
      'max-lines-per-function': ['error', { max: 150 }],
    },
  },
);
