'use strict'
/**
 * partwise for KafkaJS: the `copartitioned` consumer-group assigner and the
 * partwise partitioners for producers, computed by partwise's Rust core
 * compiled to WebAssembly (partwise.wasm, loaded synchronously by core.js;
 * no native module, nothing built at install). The KafkaJS side is
 * adapter.js.
 */
module.exports = require('./adapter')(require('./core'))
