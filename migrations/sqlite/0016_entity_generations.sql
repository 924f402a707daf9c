-- The resolver's entity snapshots across replicas (host/invoke/src/snapshots.rs,
-- host/storage/src/entities.rs). Same number, same meaning as
-- migrations/postgres/0016_entity_generations.sql.
--
-- A call of a tool that changes entities (its manifest's `invalidates`)
-- moves the generation of each kind it names, in its audit row's
-- transaction. A replica remembers a snapshot with the generation it was
-- listed under and lists again when the generation has moved, whichever
-- replica moved it. No row: generation 0.
CREATE TABLE entity_generations (
    tenant     TEXT    NOT NULL,
    plugin     TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    generation INTEGER NOT NULL,
    PRIMARY KEY (tenant, plugin, kind)
);
