/** Source of the current time; tests inject a fixed or movable one. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
