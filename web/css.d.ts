// Style sheets imported for esbuild to bundle (scripts/build-web.ts); they export nothing.
declare module '*.css';
