// Injection tokens, in a leaf module so every binding site and consumer shares them.
export const TOKENS = {
  Config: Symbol.for('memberkit.Config'),
  Storage: Symbol.for('memberkit.StorageAdapter'),
  Metadata: Symbol.for('memberkit.MetadataAdapter'),
  EventLog: Symbol.for('memberkit.EventLogStore'),
  Cache: Symbol.for('memberkit.Cache'),
  Logger: Symbol.for('memberkit.Logger'),
  Clock: Symbol.for('memberkit.Clock'),
  AccessControl: Symbol.for('memberkit.AccessControl'),
  Sessions: Symbol.for('memberkit.SessionResolver'),
  Objects: Symbol.for('memberkit.ObjectService'),
  Storing: Symbol.for('memberkit.StorageService'),
  Events: Symbol.for('memberkit.EventService'),
  Capabilities: Symbol.for('memberkit.CapabilitiesService'),
  Notifications: Symbol.for('memberkit.NotificationService'),
  Changes: Symbol.for('memberkit.ChangeNotifier'),
  ExtensionServices: Symbol.for('memberkit.ExtensionServices'),
} as const;
