import type { Slot } from '../scheduling/scheduling-provider.ts';
import { ymd } from '../shared/zoned-time.ts';

/**
 * At most `max` slots to offer, spread over the days instead of the first `max` of the first
 * morning: the earliest days first, each day's share evenly spaced from its first slot on, so
 * the lead hears mornings and afternoons. Returned in time order.
 */
export function chooseSlotsToOffer(slots: readonly Slot[], tz: string, max: number): Slot[] {
  const days = new Map<string, Slot[]>();
  for (const slot of slots) {
    const day = ymd(Date.parse(slot.start), tz).join('-');
    days.set(day, [...(days.get(day) ?? []), slot]);
  }
  const used = [...days.values()].slice(0, max);
  const share = Math.floor(max / Math.max(used.length, 1));
  const extra = max % Math.max(used.length, 1);
  return used.flatMap((daySlots, i) => {
    const k = Math.min(daySlots.length, share + (i < extra ? 1 : 0));
    return Array.from({ length: k }, (_, j) => daySlots[Math.floor((j * daySlots.length) / k)]!);
  });
}
