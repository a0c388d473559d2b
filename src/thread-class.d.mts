export declare function setSchedulingClass(policy: 'idle' | 'other'): boolean;
export declare function writingAtNormalClass<T>(write: () => T): T;
