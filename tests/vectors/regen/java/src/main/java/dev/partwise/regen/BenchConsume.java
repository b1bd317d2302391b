package dev.partwise.regen;
final class BenchConsume { static void run(java.util.Map<String,String> f) {} }
