export declare const FIX_MARKER: string;
export declare function lmdbNativePaths(): { dir: string; source: string; built: string };
