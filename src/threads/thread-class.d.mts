export declare function setThreadNiceness(nice: number): boolean;
export declare function setSchedulingClass(policy: 'idle' | 'other'): boolean;
export declare function mayLeaveIdleClass(status: string, limits: string, nice: number): boolean;
export declare function enterIdleClass(nice: number): boolean;
export declare function writingAtNormalClass<T>(write: () => T): T;
